"""Searching and sorting through a BelongsTo relation.

Both read the parents first, through the parent repository's own read rules for this user (its
policy's `allow_restify`, `scope()` and `show`): a user never finds or orders records by a parent
they may not see. No `$lookup` (the embedded server lacks the pipeline form); each step is a plain
query on one collection, bounded by `query.max_relation_sort` parents. Filters through relations read the same way
(`service.core.reading.relation_filters`).

Search: the ids of the parents whose searchable fields contain the text, then `{<key>: {$in: ids}}`
beside the record's own searchable fields.

Sort (`sort=user.name`, page mode only): the parents in that order (then by id), and each parent's
records in the order of the other sort keys (id last). A page is found by walking the parents in
order and counting their records (one equality count per parent, sent in batches that double: 1, 2,
4 ... 32), until the page is covered; then at most three queries read it (the first parent's part, the parents
wholly on the page, the last parent's part). Records whose parent is missing or hidden from the user
come after all others, in both directions.
"""
import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from service.core.declarations import READ, Context, Resource, ResourceRelation, ability
from service.core.kernel import BadRequest, Condition, Through, refuse, relation_conditions, with_values
from service.core.reading import visibility
from service.core.reading.cursors import Page
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Restify

_MAX_BATCH = 32  # parents counted at once


def limit(app: "Restify") -> int:
    return int(app.settings.positive("query", "max_relation_sort"))


async def _parents(app: "Restify", relation: ResourceRelation, context: Context, where: Filter,
                   sort: list[tuple[str, int]] | None, what: str) -> list[dict[str, Any]]:
    """The parents `where` finds that the user may see, at most `limit`; more is a 400."""
    return await visible_records(app, relation.target, context, where, sort, what,
                                 "search" if what == "search" else "sort")


async def visible_records(app: "Restify", target: Resource, context: Context, where: Filter,
                          sort: list[tuple[str, int]] | None, what: str, label: str) -> list[dict[str, Any]]:
    """The records of `target` `where` finds that the user may see, at most `limit`; more is a 400
    naming `label` (the parameter) and `what` (the read)."""
    seen = visibility.visibility_of(app, target, context.user)
    if not seen.entered:
        return []
    bound = limit(app)
    rows = await app.collection(target).find(seen.within(where), sort=sort, limit=bound + 1)
    if len(rows) > bound:
        message = (f"The {what} reads more than {bound} {target.name} records (query.max_relation_sort); "
                   f"narrow it down.")
        raise BadRequest(message, {label: [message]})
    return seen.shown(rows)


async def matching_ids(app: "Restify", target: Resource, context: Context, equals: dict[str, Any],
                       conditions: tuple[Any, ...], what: str, label: str, key: str = "id") -> list[str]:
    """`key` (an id) of each record of `target` that `equals` and `conditions` find and the user may see
    (`visible_records`): what a filter through a relation reads first."""
    rows = await visible_records(app, target, context, Filter(equals=equals, conditions=conditions), None, what,
                                 label)
    return [row[key] for row in rows if isinstance(row.get(key), str)]


async def search_within(app: "Restify", resource: Resource, context: Context,
                        text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(key, parent ids) per searchable relation: records whose key is one of them match `text` too."""
    if not text:
        return ()
    found = []
    for relation in resource.relations.values():
        if relation.search_fields:
            where = Filter(search_fields=relation.search_fields, search_text=text)
            parents = await _parents(app, relation, context, where, None, "search")
            found.append((relation.local_key, tuple(parent["id"] for parent in parents)))
    return tuple(found)


def relation_key(sort: list[tuple[str, int]]) -> tuple[str, str, int] | None:
    """(relation, field, direction) when the sort starts with `<relation>.<field>`."""
    name, direction = sort[0] if sort else ("", 1)
    if "." not in name:
        return None
    relation, _, field_name = name.partition(".")
    return relation, field_name, direction


async def read_through_page(app: "Restify", resource: Resource, context: Context, where: Filter,
                            sort: list[tuple[str, int]], per_page: int, page: int, cursor: str | None) -> Page:
    """Page `page` of the records `where` finds, in the order of their parents (see the module)."""
    if cursor is not None:
        message = "A sort by a related field reads pages by number: it cannot be used with cursor."
        raise BadRequest(message, {"cursor": [message]})
    relation_name, field_name, direction = relation_key(sort)  # type: ignore[misc]
    relation = resource.relations[relation_name]
    rest = sort[1:]
    parents = await _parents(app, relation, context, Filter(), [(field_name, direction), ("id", direction)], "sort")
    skip = (page - 1) * per_page
    rows = await _window(app.collection(resource), where, relation.local_key, [p["id"] for p in parents],
                         rest, skip, per_page + 1)
    return Page(rows[:per_page], skip, len(rows) > per_page, None, None)


async def _window(collection: Any, where: Filter, key: str, parent_ids: list[str], sort: list[tuple[str, int]],
                  skip: int, size: int) -> list[dict[str, Any]]:
    """Records [skip, skip + size) in parent order, then those of no listed parent."""
    end = skip + size
    seen = 0       # records of the parents walked so far
    parts: list[tuple[str, int, int, int]] = []  # (parent id, records before the page, on it, its count)
    start, batch = 0, 1
    while start < len(parent_ids) and seen < end:
        chunk = parent_ids[start:start + batch]
        # One count per parent, sent together: an equality count is cheap on every server (the
        # embedded one reads a `$group` or an `$in` inside `$match` in Python, over the whole collection),
        # and reads the relation key's index beside a search too (`indexed`).
        counts = await asyncio.gather(*(collection.count(_of_parent(where, key, p), indexed=key) for p in chunk))
        for parent_id, count in zip(chunk, counts, strict=True):
            first = max(skip - seen, 0)
            taken = min(count, end - seen) - first
            if taken > 0:
                parts.append((parent_id, first, taken, count))
            seen += count
            if seen >= end:
                break
        start, batch = start + len(chunk), min(batch * 2, _MAX_BATCH)
    rows = await _read_parts(collection, where, key, parts, sort)
    if seen < end and start >= len(parent_ids):  # past every listed parent: the records of none
        orphans = _with(where, (key, "nin", tuple(parent_ids)))
        rows += await collection.find(orphans, sort=sort, skip=max(skip - seen, 0), limit=end - max(skip, seen))
    return rows


async def _read_parts(collection: Any, where: Filter, key: str, parts: list[tuple[str, int, int, int]],
                      sort: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The records of each part, in part order: whole parents in one `$in` query, cut ones each alone."""
    whole = tuple(parent_id for parent_id, first, taken, count in parts if first == 0 and taken == count)
    by_parent: dict[str, list[dict[str, Any]]] = {}
    if whole:
        for row in await collection.find(_with(where, (key, "in", whole)), sort=sort):
            by_parent.setdefault(row.get(key), []).append(row)
    rows: list[dict[str, Any]] = []
    for parent_id, first, taken, count in parts:
        if first == 0 and taken == count:
            rows += by_parent.get(parent_id, [])[:taken]
        else:
            rows += await collection.find(_of_parent(where, key, parent_id), sort=sort, skip=first, limit=taken)
    return rows


def _with(where: Filter, condition: tuple[str, str, Any]) -> Filter:
    return replace(where, conditions=(*where.conditions, condition))


def _of_parent(where: Filter, key: str, parent_id: str) -> Filter:
    """`where` and `<key> = parent_id` (an exact value the request already set on `key` stays: when it
    differs, nothing matches)."""
    if key in where.equals:
        return where if where.equals[key] == parent_id else replace(where, conditions=((key, "in", ()),))
    return replace(where, equals={**where.equals, key: parent_id})


class Found(tuple[str, ...]):
    """The ids a Through resolved to; it still names the Through, which a cursor is bound to (the
    ids may change as records do)."""
    through: Through | None = None

    @staticmethod
    def of(ids: Iterable[str], through: Through) -> "Found":
        found = Found(dict.fromkeys(ids))
        found.through = through
        return found


async def resolve(app: "Restify", resource: "Resource", context: Context,
                  conditions: Sequence[Condition]) -> tuple[Condition, ...]:
    """`conditions` with each Through read into the ids it stands for: the step a filter through a relation
    takes first (`service.core.reading.relation_filters`)."""
    found: dict[Through, Found] = {}
    for asked in relation_conditions(conditions):
        if asked not in found:
            found[asked] = Found.of(await _ids(app, resource, context, asked), asked)
    if not found:
        return tuple(conditions)
    return with_values(conditions, lambda _, value: found[value] if isinstance(value, Through) else value)


def bindable(conditions: Iterable[Condition]) -> tuple[Condition, ...]:
    """`conditions` as a cursor is bound to them: a relation filter by what it asks, not the ids it found."""
    return with_values(conditions, lambda _, value: repr(value.through) if isinstance(value, Found) else value)


async def _ids(app: "Restify", resource: "Resource", context: Context, asked: Through) -> list[str]:
    relation = resource.relations[asked.relation]
    target = relation.target
    label = asked.label or asked.relation
    seen_target = app.registry.policies.gate(target.model, context.user)
    if not seen_target.entered or not context.can(ability(target.name, READ)):
        refuse(label, f"The filter through {asked.relation!r} reads {target.name}, which this user may not read.")
    if not asked.exists:
        return await matching_ids(app, target, context, dict(asked.equals), asked.conditions,
                                  f"filter through {asked.relation}", label)
    what = f"has {asked.relation}"
    if relation.kind == "has_many":  # the owners of the children the user may see
        present = ((relation.foreign_key, "null", False),)
        return await matching_ids(app, target, context, {}, present, what, label, relation.foreign_key)
    return await matching_ids(app, target, context, {}, (), what, label)
