"""Resource objects: `{"id", "type", "attributes", "relationships"?, "meta"?}`.

Only exposed (non-hidden) fields appear, and a field by policy only where its `can_see` allows
(`service.core.declarations.exposure`); stored values are normalized by the
field's kind, so a boolean the server kept as 1/0 still reads as true/false.
"""
from datetime import datetime
from typing import Any

from service.core.declarations import TIMESTAMPS, Field, iso
from storage import version_of

_AS_STORED = frozenset({str, int, float})  # what a field that is not a boolean shows as it is stored


def present(kind: str, value: Any) -> Any:
    """A stored value as answers write it: a boolean field's 1/0 as true/false, a date in UTC; any
    other value as stored."""
    if value is None:
        return None
    if kind == "boolean":
        return bool(value)
    return iso(value) if isinstance(value, datetime) else value


def visible(fields: list[Field]) -> list[Field]:
    return [f for f in fields if not f.is_hidden]


class Attributes:
    """How a list of fields writes the attributes of a record, with the timestamps (those in `keep`
    when a fieldset is given): what it reads of the fields is read once, for every record of a page."""

    __slots__ = ("fields", "timestamps")

    def __init__(self, fields: list[Field], keep: frozenset[str] | None = None) -> None:
        self.fields = tuple((f.name, f.kind, f.shown_for) for f in fields)
        self.timestamps = TIMESTAMPS if keep is None else tuple(name for name in TIMESTAMPS if name in keep)

    def write(self, document: dict[str, Any], shown: dict[str, Any] | None = None) -> dict[str, Any]:
        """The attributes of `document`, written into `shown` when given."""
        get = document.get
        shown = {} if shown is None else shown
        for name, kind, shown_for in self.fields:
            if shown_for is not None and not shown_for(document):
                continue  # `can_see` refuses this record's value to this user
            value = get(name)
            # Strings, numbers and None of fields that are not booleans are shown as stored: the common
            # case skips present().
            shown[name] = value if (type(value) in _AS_STORED and kind != "boolean") or value is None \
                else present(kind, value)
        for name in self.timestamps:
            value = get(name)
            shown[name] = value if value is None or type(value) is str else iso(value)
        return shown


def attributes(fields: "list[Field] | Attributes", document: dict[str, Any],
               keep: frozenset[str] | None = None, shown: dict[str, Any] | None = None) -> dict[str, Any]:
    """The attributes of `fields` (or of a writer already made of them, which holds its `keep`)."""
    writer = fields if isinstance(fields, Attributes) else Attributes(fields, keep)
    return writer.write(document, shown)


def record_meta(flags: dict[str, bool], document: dict[str, Any]) -> dict[str, Any]:
    """The `meta` of a record answered on its own or in a page: its authorization flags (none where the
    door shows none) and its version (which every write changes; the ETag of show and what If-Match
    compares)."""
    return {**flags, "version": version_of(document)}


def resource_object(type_name: str, fields: "list[Field] | Attributes", document: dict[str, Any],
                    relationships: dict[str, list[dict]] | None = None,
                    meta: dict[str, Any] | None = None, keep: frozenset[str] | None = None) -> dict[str, Any]:
    """`fields` are the visible fields, computed once per request rather than per row (or their
    `Attributes`, once per page); with a fieldset (`keep`) they are its fields alone, and the timestamps
    are those it keeps."""
    data: dict[str, Any] = {"id": document["id"], "type": type_name,
                            "attributes": attributes(fields, document, keep)}
    if relationships is not None:
        data["relationships"] = relationships
    if meta is not None:
        data["meta"] = meta
    return data


def flat_object(fields: "list[Field] | Attributes", document: dict[str, Any],
                keep: frozenset[str] | None = None) -> dict[str, Any]:
    """A record on one level: its id, its version, then its attributes (an attribute named `version`
    wins, as it does in the record's GraphQL type)."""
    return attributes(fields, document, keep, {"id": document["id"], "version": version_of(document)})


def with_relationships(data: dict[str, Any], relationships: dict[str, list[dict]]) -> dict[str, Any]:
    """`data` (a resource object) given its relationships where `resource_object` puts them: before `meta`."""
    meta = data.pop("meta", None)
    data["relationships"] = relationships
    if meta is not None:
        data["meta"] = meta
    return data
