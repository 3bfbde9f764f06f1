"""A record as one resource answers it: its attributes, its authorization flags and the relations
the request asked for (with the model's eager ones). Show, the profile, the writes and the live
changes all present a record through here."""
from typing import TYPE_CHECKING, Any

from service.core.declarations import Budget, Context, Resource, budget_of, own_size
from service.core.reading import loading
from service.core.reading.computed import fill
from service.core.reading.fieldsets import Fieldsets
from service.core.reading.query import (
    RelationTree, check_parameter_names, max_related_depth, parse_related, relatable_per_page,
)
from service.core.reading.serializer import record_meta, resource_object, visible, with_relationships

if TYPE_CHECKING:
    from service.core.declarations import Restify

Asked = tuple[RelationTree, int | None]  # the relations to load, and the cap of those not eager


def serialize(app: "Restify", resource: Resource, context: Context, document: dict[str, Any],
              fields: list | None = None, spent: Budget | None = None,
              keep: frozenset[str] | None = None) -> dict[str, Any]:
    """One resource object with its authorization flags (where the context shows them), as show, store
    and update return it, charged to the answer's budget (`spent`, else the context's; `keep`: the
    attributes a fieldset keeps); pass the `fields` the request already built to spare building them
    again."""
    flags = app.registry.policies.flags(resource.model, context.user, resource.model(document)) \
        if context.shows_flags else {}
    meta = record_meta(flags, document)
    shown = visible(fields if fields is not None else resource.fields(context))
    data = resource_object(resource.name, shown, document, None, meta)
    (spent if spent is not None else budget_of(app, context)).charge(own_size(data, keep))
    return data


def asked_relations(app: "Restify", resource: Resource, context: Context) -> Asked:
    """The relations `context.params` ask for (`related`, `relatablePerPage`), checked before any
    record is read: a bad parameter is a 400 whether the record exists or not."""
    check_parameter_names(context.params)
    tree = parse_related(resource, context.params, max_related_depth(app.settings))
    loading.require_readable(resource, tree, context)
    return loading.with_eager(resource, tree), relatable_per_page(context.params, app.settings)


async def with_relations(app: "Restify", resource: Resource, context: Context, document: dict[str, Any],
                         asked: Asked | None = None, chosen: Fieldsets | None = None,
                         spent: Budget | None = None) -> dict[str, Any]:
    """The resource object of `document` with its relations loaded (only the eager ones when
    nothing was asked), as `context.user` may see them; `chosen`: the fieldsets the answer will be
    trimmed to (`apply_fieldsets`), which its budget (`spent`, else the context's) counts."""
    tree, cap = asked if asked is not None else (loading.with_eager(resource, {}), None)
    spent, keep = spent if spent is not None else budget_of(app, context), chosen or {}
    await fill(app, resource, context, [document], keep=keep.get(resource.name))
    data = serialize(app, resource, context, document, spent=spent, keep=keep.get(resource.name))
    if tree:
        related = await loading.load_related(app, resource, context, [document], tree, cap=cap, spent=spent, keep=keep)
        if related.relationships[document["id"]]:
            with_relationships(data, related.relationships[document["id"]])
    return data
