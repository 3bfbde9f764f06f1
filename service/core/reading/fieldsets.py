"""Sparse fieldsets (JSON:API): `fields[<type>]=a,b` and `fields=a,b`.

`fields[<type>]` applies to every resource object of that type in the answer — the listed or shown
records and the related ones in `relationships`, at any depth; `fields` is the same for the type the
request lists or shows (both for one type: a 400). Names are attributes (the timestamps included) and
relation names: a listed relation keeps its `relationships` entry, an unlisted one is left out (listing
it does not load it: `related` does). `id`, `type` and `meta` always come. An unknown or hidden name is
a 400 naming it, with the same words, so hidden fields (and those `can_see` keeps from the user)
cannot be probed.

The selection trims the answer; it does not reach the database: policies, flags, versions and relation
keys are read from whole records, and a record is one document either way.
"""
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from service.core.declarations import TIMESTAMPS, Context, Resource, askable
from service.core.kernel import BadRequest
from service.core.reading.query import FIELDSET_NAME

if TYPE_CHECKING:
    from service.core.declarations import Restify

Fieldsets = dict[str, frozenset[str]]  # type -> the names to keep


def selectable(resource: Resource, context: Context) -> list[str]:
    """The names `fields[<type>]` may list for `resource`: visible attributes (not private to the
    user), timestamps, relations."""
    shown = [f.name for f in askable(resource.fields(context))]
    return [*shown, *TIMESTAMPS, *sorted(resource.relations)]


# `context.extras[SELECTED]`: per type, the names a door writes of it (GraphQL's selection), read as
# fieldsets for the types `fields` does not name; a type with a name it cannot select is kept whole.
SELECTED = "selected"


def parse_fieldsets(app: "Restify", resource: Resource, context: Context) -> Fieldsets:
    """The fieldsets `context.params` ask for, checked (a 400 before any record is read), and those
    of the door's selection (`SELECTED`)."""
    chosen: Fieldsets = {}
    for name, raw in context.params.items():
        match = FIELDSET_NAME.match(name)
        if name != "fields" and match is None:
            continue
        type_name = match["type"] if match else resource.name
        if type_name in chosen:
            _refuse(name, f"Both fields and fields[{type_name}] select the fields of {type_name}: send one.")
        target = app.registry.get(type_name)
        if target is None:
            _refuse(name, f"Unknown type {type_name!r} in {name}.")
        names = [part.strip() for part in raw.split(",") if part.strip()]
        allowed = set(selectable(target, context))
        unknown = [part for part in names if part not in allowed]
        if unknown:
            _refuse(name, f"The field {unknown[0]!r} cannot be selected for {type_name}.")
        chosen[type_name] = frozenset(names)
    for type_name, names in (context.extras.get(SELECTED) or {}).items():
        target = app.registry.get(type_name)
        if type_name not in chosen and target is not None and names <= set(selectable(target, context)):
            chosen[type_name] = names
    return chosen


def _refuse(name: str, message: str) -> NoReturn:
    raise BadRequest(message, {name: [message]})


def apply_fieldsets(data: dict[str, Any] | list[dict[str, Any]], chosen: Fieldsets) -> None:
    """Trims resource objects (one or a list) and their related ones, in place."""
    if chosen:
        _trim(data if isinstance(data, list) else [data], chosen)


def _trim(objects: Iterable[dict[str, Any]], chosen: Fieldsets) -> None:
    for item in objects:
        keep = chosen.get(item.get("type", ""))
        relationships = item.get("relationships")
        if keep is not None:
            shown = item.get("attributes", {})
            if not shown.keys() <= keep:  # not built to the fieldset already
                item["attributes"] = {k: v for k, v in shown.items() if k in keep}
            if relationships is not None:
                relationships = {k: v for k, v in relationships.items() if k in keep}
                if relationships:
                    item["relationships"] = relationships
                else:
                    del item["relationships"]
        for related in (relationships or {}).values():
            _trim(related, chosen)
