"""Resource objects: `{"id", "type", "attributes", "relationships"?, "meta"?}`.

Only exposed (non-hidden) fields appear, and a field by policy only where its `can_see` allows
(`service.core.declarations.exposure`); stored values are normalized by the
field's kind, so a boolean the server kept as 1/0 still reads as true/false.
"""
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
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
    when a fieldset is given): what it reads of the fields is read once, for every record of a page.
    `write(document, shown=None)`: the attributes of `document`, written into `shown` when given."""

    __slots__ = ("fields", "timestamps", "write", "flat")

    def __init__(self, fields: list[Field], keep: frozenset[str] | None = None) -> None:
        self.fields = tuple((f.name, f.kind, f.shown_for) for f in fields)
        self.timestamps = TIMESTAMPS if keep is None else tuple(name for name in TIMESTAMPS if name in keep)
        self.write: Callable[..., dict[str, Any]] = self._write_each
        self.flat: Callable[[dict[str, Any]], dict[str, Any]] = self._flat_each
        if all(f.shown_for is None for f in fields):
            # No field by policy: the written code of these names and kinds, made once for every request.
            self.write, self.flat = compiled_writer(tuple((f.name, f.kind) for f in fields), self.timestamps)

    def _flat_each(self, document: dict[str, Any]) -> dict[str, Any]:
        return self._write_each(document, {"id": document["id"], "version": version_of(document)})

    def _write_each(self, document: dict[str, Any], shown: dict[str, Any] | None = None) -> dict[str, Any]:
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


@lru_cache(maxsize=256)
def compiled_writer(fields: tuple[tuple[str, str], ...],
                    timestamps: tuple[str, ...]) -> tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]:
    """`Attributes._write_each` for fields none of which is shown by policy, as functions of their own:
    one statement per value and one dict display, no loop. `fields`: (name, kind). The
    names are the functions' constants, never their text. The second function writes a flat record:
    the id and the version, then the attributes (`flat_object`)."""
    constants: dict[str, Any] = {"_AS_STORED": _AS_STORED, "iso": iso, "version_of": version_of}
    values = ["    get = document.get"]
    for position, (name, kind) in enumerate(fields):
        constants[f"N{position}"] = name
        values.append(f"    v{position} = get(N{position})")
        if kind == "boolean":
            values.append(f"    if v{position} is not None: v{position} = bool(v{position})")
        else:
            values.append(f"    if v{position} is not None and type(v{position}) not in _AS_STORED: "
                          f"v{position} = iso(v{position})")
    for position, name in enumerate(timestamps, start=len(fields)):
        constants[f"N{position}"] = name
        values.append(f"    v{position} = get(N{position})")
        values.append(f"    if v{position} is not None and type(v{position}) is not str: "
                      f"v{position} = iso(v{position})")
    members = ", ".join(f"N{i}: v{i}" for i in range(len(fields) + len(timestamps)))
    lines = ["def write(document, shown=None):", *values, f"    written = {{{members}}}",
             "    if shown is None: return written", "    shown.update(written)", "    return shown",
             "def flat(document):", *values,
             f"    return {{'id': document['id'], 'version': version_of(document), {members}}}"]
    exec("\n".join(lines), constants)  # noqa: S102 - the text is ours; every name is a constant
    return constants["write"], constants["flat"]


def attributes(fields: "list[Field] | Attributes", document: dict[str, Any],
               keep: frozenset[str] | None = None, shown: dict[str, Any] | None = None) -> dict[str, Any]:
    """The attributes of `fields` (or of a writer already made of them, which holds its `keep`)."""
    writer = fields if isinstance(fields, Attributes) else Attributes(fields, keep)
    return writer.write(document, shown)


def record_meta(flags: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """The `meta` of a record answered on its own or in a page: its authorization flags (none where the
    door shows none) and its version (which every write changes; the ETag of show and what If-Match
    compares). `flags` is the caller's own dict, which becomes the meta."""
    flags["version"] = version_of(document)
    return flags


def resource_object(type_name: str, fields: "list[Field] | Attributes", document: dict[str, Any],
                    relationships: dict[str, list[dict]] | None = None,
                    meta: dict[str, Any] | None = None, keep: frozenset[str] | None = None) -> dict[str, Any]:
    """`fields` are the visible fields, computed once per request rather than per row (or their
    `Attributes`, once per page); with a fieldset (`keep`) they are its fields alone, and the timestamps
    are those it keeps."""
    written = fields.write(document) if type(fields) is Attributes and keep is None else \
        attributes(fields, document, keep)
    data: dict[str, Any] = {"id": document["id"], "type": type_name, "attributes": written}
    if relationships is not None:
        data["relationships"] = relationships
    if meta is not None:
        data["meta"] = meta
    return data


def flat_object(fields: "list[Field] | Attributes", document: dict[str, Any],
                keep: frozenset[str] | None = None) -> dict[str, Any]:
    """A record on one level: its id, its version, then its attributes (an attribute named `version`
    wins, as it does in the record's GraphQL type)."""
    writer = fields if isinstance(fields, Attributes) else Attributes(fields, keep)
    return writer.flat(document)


def with_relationships(data: dict[str, Any], relationships: dict[str, list[dict]]) -> dict[str, Any]:
    """`data` (a resource object) given its relationships where `resource_object` puts them: before `meta`."""
    meta = data.pop("meta", None)
    data["relationships"] = relationships
    if meta is not None:
        data["meta"] = meta
    return data
