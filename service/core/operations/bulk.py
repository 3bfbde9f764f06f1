"""Bulk writes: many records of one repository in one request, all or nothing.

Each record takes the one write path (`writes`), but each step is taken for every record before the
next step begins:

    shape -> the records, as the user may see them -> policies -> validate -> before-hooks
    -> write every record, whole -> after-hooks -> answer

so a refusal, an invalid item or a before-hook's objection writes nothing, and after-hooks run only
once everything is written. Errors of item `i` are keyed `"<i>.<field>"`; an id the user cannot
see is invalid under `"<i>.id"`, like one that does not exist.

All or nothing: `all_or_none.whole` (in a transaction, or journalled and taken back).
"""
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from service.core.declarations import MESSAGES, WRITE, Context, Resource, Restify, budget_of, held_budget
from service.core.identity import pace_writes
from service.core.kernel import BadRequest, NotFound, ValidationFailed
from service.core.operations.all_or_none import keyed, whole
from service.core.operations.crud import deny, enter
from service.core.reading import fill, serialize, visibility_of
from service.core.writing import (Prepared, Saved, Write, after_remove, after_trash, before, before_remove,
                                  delete_record, expected_versions, finish, persist, prepare, trash_record)
from storage import BULK_MARK, Step, Versions, canonical_id, version_of

log = logging.getLogger("restify.bulk")
ID, VERSION = "id", "version"  # what a bulk update item says besides its fields, and a bulk delete item
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Target:
    """An existing record an item names: its id and the versions the item accepts (None: any)."""
    index: int
    id: str
    versions: Versions


def _invalid(errors: dict[str, list[str]]) -> ValidationFailed:
    return ValidationFailed(errors)


def _items(app: Restify, items: Any) -> list[Any]:
    """The items of a bulk request: an array of at least one and at most `bulk.max_items`."""
    if not isinstance(items, list):
        raise BadRequest("A bulk write takes a JSON array of items.")
    if not items:
        raise _invalid({"items": ["At least one item is required."]})
    limit = app.settings.cap("bulk", "max_items")
    if limit is not None and len(items) > limit:
        raise _invalid({"items": [f"At most {limit} items may be sent at once."]})
    return items


def _objects(items: list[Any]) -> list[dict[str, Any]]:
    errors = {str(i): ["The item must be an object."] for i, item in enumerate(items) if not isinstance(item, dict)}
    if errors:
        raise _invalid(errors)
    return items


def _id_error(value: Any) -> str | None:
    if value is None or value == "":
        return MESSAGES["required"].format(attribute="id")
    if not isinstance(value, str):
        return "The id must be a string."
    return None


def _targets(items: list[dict[str, Any]]) -> list[Target]:
    """The id and version of each item; every problem of every item in one 422."""
    errors: dict[str, list[str]] = {}
    targets: list[Target] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        message = _id_error(item.get(ID))
        if message is None and canonical_id(item[ID]) in seen:
            message = "The id field has a duplicate value."
        if message is not None:
            errors[f"{index}.{ID}"] = [message]
            continue
        seen.add(canonical_id(item[ID]))
        try:
            versions = expected_versions(item.get(VERSION))
        except BadRequest as refused:
            errors[f"{index}.{VERSION}"] = [refused.message]
            continue
        targets.append(Target(index, item[ID], versions))
    if errors:
        raise _invalid(errors)
    return targets


async def _records(app: Restify, resource: Resource, context: Context, targets: list[Target]) -> list[dict[str, Any]]:
    """The record of each target, read in one query within the user's scope; one the user cannot
    see (scope or `show`) is as invalid as one that does not exist."""
    by_id = await visibility_of(app, resource, context.user).find_many(t.id for t in targets)
    missing = {f"{t.index}.{ID}": [MESSAGES["exists"].format(attribute="id")]
               for t in targets if canonical_id(t.id) not in by_id}
    if missing:
        raise _invalid(missing)
    return [by_id[canonical_id(t.id)] for t in targets]


def _authorize(app: Restify, resource: Resource, context: Context, action: str,
               documents: Sequence[dict[str, Any] | None]) -> None:
    """Every record allowed before anything is written: one refusal refuses the whole request."""
    gate = app.registry.policies.gate(resource.model, context.user)
    if not all(gate.allows_or(f"{action}_bulk", action, resource.model(d) if d is not None else None)
               for d in documents):
        raise deny(context)


async def _each(items: Sequence[T], step: Callable[[T], Awaitable[R]]) -> list[R]:
    """`step` for every item; the 422s of all of them in one, keyed by item."""
    results: list[R] = []
    errors: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        try:
            results.append(await step(item))
        except ValidationFailed as failed:
            errors.update(keyed(index, failed.errors))
    if errors:
        raise _invalid(errors)
    return results


def _pinned(target: Target, document: dict[str, Any]) -> Versions:
    """The version `document` was read at, when the item accepts it (else the item's, which the
    write path then refuses with a 412): the write happens only at that version."""
    read = version_of(document)
    return frozenset((read,)) if target.versions is None or read in target.versions else target.versions


def _gone() -> ValidationFailed:
    """A record deleted by someone else since it was read."""
    return _invalid({ID: [MESSAGES["exists"].format(attribute="id")]})


async def store_bulk(app: Restify, name: str, items: Any, context: Context) -> dict[str, Any]:
    """Creates every item (store's rules for each), or none: 201's `{"data": [resource...]}`."""
    app = app.pinned()
    context.action = "store"
    resource = enter(app, name, context, WRITE)
    objects = _objects(_items(app, items))
    await pace_writes(app, context, len(objects))
    _authorize(app, resource, context, "store", [None])
    await app.ready()
    fields = resource.fields(context)
    prepared = await _each([Write(app, resource, fields, context, item) for item in objects], prepare)
    await _each(prepared, before)
    steps = [Step(p.record_id, version=1) for p in prepared]  # a new record is at version 1
    saved = await whole(app, resource, "store", steps, prepared, lambda p, _: persist(p))
    return await _answer(app, context, prepared, saved)


async def update_bulk(app: Restify, name: str, items: Any, context: Context) -> dict[str, Any]:
    """Changes every item's record (PATCH: only the fields sent; `version`, if given, must be the
    record's), or none."""
    app = app.pinned()
    context.action = "patch"
    resource = enter(app, name, context, WRITE)
    objects = _objects(_items(app, items))
    await pace_writes(app, context, len(objects))
    targets = _targets(objects)
    documents = await _records(app, resource, context, targets)
    _authorize(app, resource, context, "update", documents)
    await app.ready()
    fields = resource.fields(context)
    plans = [Write(app, resource, fields, context, {k: v for k, v in item.items() if k not in (ID, VERSION)},
                   action="patch", existing=document, versions=_pinned(target, document))
             for item, target, document in zip(objects, targets, documents, strict=True)]
    prepared: list[Prepared] = await _each(plans, prepare)
    await _each(prepared, before)
    # Each record as read is what its write replaces (the write happens only at that version).
    steps = [Step(p.record_id, before=document, version=version_of(document) + 1)
             for p, document in zip(prepared, documents, strict=True)]

    async def update(prepared: Prepared, entry: str | None) -> Saved:
        if entry is not None:  # marks the record as this bulk write's, for taking it back
            prepared.values[BULK_MARK] = entry
        try:
            return await persist(prepared)
        except NotFound:  # deleted by someone else since it was read
            raise _gone() from None

    saved = await whole(app, resource, "update", steps, prepared, update)
    return await _answer(app, context, prepared, saved)


async def _answer(app: Restify, context: Context, prepared: list[Prepared], saved: list[Saved]) -> dict[str, Any]:
    """After-hooks and the records written, the answer's budget counting all of them."""
    with held_budget(app, context):
        return {"data": [(await finish(p, s.document)).data for p, s in zip(prepared, saved, strict=True)]}


def _delete_items(items: list[Any]) -> list[dict[str, Any]]:
    """Ids, or objects with an `id` (and a `version`)."""
    return [item if isinstance(item, dict) else {ID: item} for item in items]


async def _deletable(app: Restify, name: str, items: Any, context: Context,
                     paced: bool = True) -> tuple[Resource, list[Target], list[dict[str, Any]]]:
    """The records a bulk delete names, each visible to the user and allowed to be deleted (`paced`: after
    the user's pace let it write them; a preview writes nothing)."""
    resource = enter(app, name, context, WRITE)
    targets = _targets(_delete_items(_items(app, items)))
    if paced:
        await pace_writes(app, context, len(targets))
    documents = await _records(app, resource, context, targets)
    _authorize(app, resource, context, "delete", documents)
    return resource, targets, documents


async def preview_delete(app: Restify, name: str, items: Any, context: Context) -> list[dict[str, Any]]:
    """What `delete_bulk` would delete, as resource objects, checked as it checks them; nothing changes."""
    app = app.pinned()
    context.action = "delete"
    resource, _, documents = await _deletable(app, name, items, context, paced=False)
    spent = budget_of(app, context)
    await fill(app, resource, context, documents)
    return [serialize(app, resource, context, document, spent=spent) for document in documents]


async def delete_bulk(app: Restify, name: str, items: Any, context: Context) -> None:
    """Deletes the record of every id (at its `version`, when an item gives one), or none."""
    app = app.pinned()
    context.action = "delete"
    resource, targets, documents = await _deletable(app, name, items, context)
    pairs = list(zip(targets, documents, strict=True))
    await _each(pairs, lambda pair: before_remove(resource, context, pair[1], pair[0].versions))

    soft = resource.soft_deletes  # then each record is trashed (an update), not deleted

    async def delete(pair: tuple[Target, dict[str, Any]], _: str | None) -> dict[str, Any]:
        try:
            return await (trash_record if soft else delete_record)(app, resource, pair[1], _pinned(*pair))
        except NotFound:  # deleted by someone else since it was read
            raise _gone() from None

    steps = [Step(d["id"], before=d) for d in documents]
    removed = await whole(app, resource, "update" if soft else "delete", steps, pairs, delete)
    for document in removed:
        await (after_trash(resource, context, document) if soft else after_remove(app, resource, context, document))
