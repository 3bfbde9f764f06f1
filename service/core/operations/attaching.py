"""Attach, detach and sync: changing the ids a record's BelongsToMany relation holds.

    POST <prefix>/<r>/<id>/attach/<relation>   {"<relation>": [ids]}   adds them (each once)
    POST <prefix>/<r>/<id>/detach/<relation>   {"<relation>": [ids]}   takes them out
    POST <prefix>/<r>/<id>/sync/<relation>     {"<relation>": [ids]}   makes them the set

The record must be visible (else 404, as update); every id must name a record of the relation's
repository the user may see (its scope and `show`), else 422 under `errors.<relation>`. Policies:
`attach_<relation>(user, record, related)` and `detach_<relation>(user, record, related)` for each
related record, `sync_<relation>(user, record)`; each falls back to `update(user, record)`, and a
sync without its own method needs the attach and detach it makes.

A relation change is a change of the record, written by the one write path (`service.core.writing.writes`)
like any update: `updated_at`, the repository's `before_update` hook, the atomic save with a new
version, then the `updated` hook (`context.action` says which operation; `values` holds `updated_at`,
and for sync the new array too, which the hook may change). The save is one atomic update:
`$addToSet` / `$pull` with the version (`If-Match` checked inside), or for sync one `$set` of the
whole array at the version it read, which keeps the attached ids the user cannot see.
"""
from dataclasses import dataclass
from typing import Any

from service.core.declarations import (DATA_MEMBER, MESSAGES, WRITE, Context, Resource, ResourceRelation, Restify,
                                       held_budget)
from service.core.kernel import NotFound, PreconditionFailed, ValidationFailed
from service.core.operations import crud as operations
from service.core.reading import (apply_fieldsets, fill, asked_relations, parse_fieldsets, serialize, visibility_of,
                                  with_relations)
from service.core.writing import SetChange, Write, check_version, write
from storage import Stale, Versions, canonical_id, version_of

OPERATIONS = ("attach", "detach", "sync")
SYNC_ATTEMPTS = 5  # a sync without If-Match reads again when another write came between its read and its write


def many_relations(resource: Resource) -> dict[str, ResourceRelation]:
    """The relations attach, detach and sync change: the BelongsToMany ones."""
    return {name: r for name, r in resource.relations.items() if r.kind == "belongs_to_many"}


def _relation(resource: Resource, name: str) -> ResourceRelation:
    relation = resource.relations.get(name)
    if relation is None:
        raise NotFound(f"{resource.name} has no relation {name!r}.")
    if relation.kind != "belongs_to_many":
        raise NotFound(f"The relation {name!r} of {resource.name} is not a BelongsToMany: only those are "
                       "attached, detached and synced.")
    return relation


@dataclass
class Planned:
    """One relation change, checked and authorized, before it is written."""
    resource: Resource
    relation: ResourceRelation
    document: dict[str, Any]   # the record as read
    requested: list[str]       # the ids sent, in their stored spelling, each once
    ids: list[str]             # the relation's ids as the change leaves them
    attached: list[str]        # ids it adds
    detached: list[str]        # ids it takes out


def _requested(app: Restify, payload: Any, name: str, operation: str) -> list[str]:
    """The ids of the payload `{"<name>": [ids]}`: a list of strings, not empty but for sync."""
    value = payload.get(name) if isinstance(payload, dict) else None
    if value is None or (value == [] and operation != "sync"):
        raise ValidationFailed({name: [MESSAGES["required"].format(attribute=name)]})
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationFailed({name: [f"The {name} must be a list of ids."]})
    most = int(app.settings.get("attach", "max_ids"))
    if len(value) > most:
        raise ValidationFailed({name: [f"The {name} may not have more than {most} ids (attach.max_ids)."]})
    return list(dict.fromkeys(canonical_id(item) for item in value))


async def _visible(app: Restify, relation: ResourceRelation, context: Context,
                   ids: list[Any]) -> dict[str, Any]:
    """The related records among `ids` the user may see (scope and `show`), as models, by id."""
    found = await visibility_of(app, relation.target, context.user).find_many(ids)
    return {id: relation.target.model(row) for id, row in found.items()}


def _authorize(app: Restify, planned: Planned, operation: str, related: dict[str, Any], context: Context) -> None:
    gate = app.registry.policies.gate(planned.resource.model, context.user)
    record = planned.resource.model(planned.document)
    name = planned.relation.name

    def each(action: str, ids: list[str]) -> bool:
        return all(gate.allows_or(f"{action}_{name}", "update", record, related[i]) for i in ids)

    if operation == "sync":
        if callable(getattr(gate.policy, f"sync_{name}", None)):
            allowed = gate.allows_or(f"sync_{name}", "update", record)
        else:  # no rule of its own: the attaches and detaches it makes, or update when it makes none
            allowed = each("attach", planned.attached) and each("detach", planned.detached) and (
                bool(planned.attached or planned.detached) or gate.allows("update", record))
    else:
        allowed = each(operation, planned.requested)
    if not allowed:
        raise operations.deny(context)


async def _plan(app: Restify, resource: Resource, id: str, operation: str, relation_name: str, payload: Any,
                context: Context, versions: Versions) -> Planned:
    relation = _relation(resource, relation_name)
    document = await operations.find(app, resource, id, context)
    check_version(document, versions)
    requested = _requested(app, payload, relation_name, operation)
    stored = document.get(relation.local_key)
    current = list(stored) if isinstance(stored, list) else []
    related = await _visible(app, relation, context, requested + (current if operation == "sync" else []))
    missing = [i for i in requested if i not in related]
    if missing:
        raise ValidationFailed({relation_name: [f"The selected {relation_name} is invalid: {', '.join(missing)}."]})
    chosen = set(requested)
    if operation == "attach":
        ids = current + [i for i in requested if i not in current]
    elif operation == "detach":
        ids = [i for i in current if i not in chosen]
    else:  # what the user cannot see stays attached
        ids = [i for i in current if i in chosen or i not in related] + [i for i in requested if i not in current]
    kept = set(ids)
    planned = Planned(resource, relation, document, requested, ids,
                      attached=[i for i in ids if i not in current], detached=[i for i in current if i not in kept])
    _authorize(app, planned, operation, related, context)
    return planned


async def _write(app: Restify, planned: Planned, operation: str, context: Context,
                 versions: Versions) -> dict[str, Any]:
    """The change, through the write path: timestamps, `before_update`, the atomic save, `updated`."""
    resource, key = planned.resource, planned.relation.local_key
    if operation == "sync":  # the whole array, at the version it was computed from
        decided, change = {key: planned.ids}, None
        versions = frozenset((version_of(planned.document),))
    else:
        decided, change = {}, SetChange(key, "add" if operation == "attach" else "pull", planned.requested)
    written = await write(Write(app, resource, resource.fields(context), context, {}, action="patch",
                                existing=planned.document, versions=versions, decided=decided, change=change,
                                answer=False))
    return written.document


async def change(app: Restify, name: str, id: str, operation: str, relation: str, payload: Any,
                 context: Context, versions: Versions = None) -> dict[str, Any]:
    """Runs `operation` ("attach", "detach", "sync") on record `id`'s `relation`; answers the record
    with `relationships.<relation>` (as show with `related=<relation>` answers it)."""
    app = app.pinned()
    context.action = operation
    resource = await operations.enter_to_write(app, name, context)
    tree, cap = asked_relations(app, resource, context)  # a bad parameter is a 400 before anything is written
    chosen = parse_fieldsets(app, resource, context)
    if relation in resource.relations:
        tree = {**tree, relation: tree.get(relation, {})}
    for attempt in range(1, SYNC_ATTEMPTS + 1):
        planned = await _plan(app, resource, id, operation, relation, payload, context, versions)
        await app.ready()
        try:
            document = await _write(app, planned, operation, context, versions)
            break
        except Stale:
            # Only sync can find its own read outdated; without If-Match the client asked for no version.
            if operation != "sync" or versions is not None or attempt == SYNC_ATTEMPTS:
                raise PreconditionFailed() from None
    with held_budget(app, context) as spent:
        data = await with_relations(app, planned.resource, context, document, (tree, cap), chosen)
        spent.charge(DATA_MEMBER)
    apply_fieldsets(data, chosen)
    return {"data": data}


async def preview(app: Restify, name: str, id: str, operation: str, relation: str, payload: Any,
                  context: Context) -> dict[str, Any]:
    """What `change` would do, checked and authorized as it would be, without writing: the record as
    it is now and the ids it would attach and detach."""
    app = app.pinned()
    context.action = operation
    resource = operations.enter(app, name, context, WRITE)
    planned = await _plan(app, resource, id, operation, relation, payload, context, None)
    await fill(app, planned.resource, context, [planned.document])
    return {"record": serialize(app, planned.resource, context, planned.document), "relation": relation,
            "attach": planned.attached, "detach": planned.detached}
