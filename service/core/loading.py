"""Relation loading: one query per relation per level, whatever the number of rows.

On index every relation is loaded for the whole page at once (`$in`), uncapped.
On show, relations that are not eager are capped at `relatablePerPage`; relations
the model loads eagerly come back whole. Every load carries the related policy's
scope inside its query; related records are then filtered by its `show` and
serialized through their own repository. `query.max_related_rows` bounds what one
request may load, whatever the page size and the relation paths.
"""
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from service.core.context import Context
from service.core.errors import BadRequest
from service.core.query import RelationTree
from service.core.registry import Resource, ResourceRelation
from service.core.serializer import resource_object, visible
from storage import Filter

if TYPE_CHECKING:
    from service.core.app import Restify

Relationships = dict[str, dict[str, list[dict[str, Any]]]]  # owner id -> relation name -> resources


def with_eager(resource: Resource, tree: RelationTree, ancestors: frozenset[type] = frozenset()) -> RelationTree:
    """`tree` plus the relations the model always loads. An eager relation back to a model already
    on the path is left out: `User.eager = ("posts",)` with `Post.eager = ("user",)` stops there."""
    merged = dict(tree)
    for name in resource.model.eager:
        relation_name = next((n for n, r in resource.relations.items() if r.decl.name == name), None)
        if relation_name is not None and resource.relations[relation_name].target.model not in ancestors:
            merged.setdefault(relation_name, {})
    return merged


class Budget:
    """The related records one request may still load (`query.max_related_rows`; None: no cap)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0

    def server_limit(self, limit: int | None) -> int | None:
        """What a query may ask the server for: one row past the budget is enough to know it is spent."""
        if self.limit is None:
            return limit
        spare = self.limit - self.used + 1
        return min(limit, spare) if limit else spare

    def take(self, rows: int) -> None:
        self.used += rows
        if self.limit is not None and self.used > self.limit:
            message = (f"This request would load more than {self.limit} related records "
                       "(query.max_related_rows); ask for fewer records or relations.")
            raise BadRequest(message, {"related": [message]})


async def load(app: "Restify", resource: Resource, context: Context, owners: list[dict[str, Any]],
               tree: RelationTree, cap: int | None = None, ancestors: frozenset[type] = frozenset(),
               budget: Budget | None = None) -> Relationships:
    """Relationships for every owner document, keyed by owner id. Related records bring their own
    model's eager relations too (`ancestors`: the models above them, where those stop)."""
    result: Relationships = {owner["id"]: {} for owner in owners}
    if not owners:
        return result
    budget = budget or Budget(app.settings.max_related_rows)
    path = ancestors | {resource.model}
    for name, children in tree.items():
        relation = resource.relations[name]
        eager = relation.decl.name in resource.model.eager
        limit = None if eager else cap
        gate = app.registry.policies.gate(relation.target.model, context.user)
        targets = await _fetch(app, relation, context, owners, limit, budget) if gate.entered else []
        targets = [t for t in targets if gate.shows(relation.target.model(t))]
        children = with_eager(relation.target, children, path | {relation.target.model})
        nested = await load(app, relation.target, context, targets, children, cap, path, budget) if children else {}
        fields = visible(relation.target.fields(context))
        serialized = {
            t["id"]: resource_object(relation.target.name, fields, t, nested.get(t["id"]) if children else None)
            for t in targets
        }
        for owner_id, items in _group(relation, owners, targets).items():
            result[owner_id][name] = [serialized[t["id"]] for t in items]
    return result


async def _fetch(app: "Restify", relation: ResourceRelation, context: Context, owners: list[dict[str, Any]],
                 limit: int | None, budget: Budget) -> list[dict[str, Any]]:
    collection = app.collection(relation.target)
    scope = app.registry.policies.restrict(relation.target.model, context.user, Filter())
    if relation.kind == "has_many":
        # With one owner (show) the cap goes to the server; with many it is applied per owner.
        single_limit = limit if len(owners) == 1 else None
        rows = await collection.find_within(relation.foreign_key, [o["id"] for o in owners], sort=[("id", 1)],
                                            limit=budget.server_limit(single_limit), where=scope)
        rows = _cap_per_owner(rows, relation.foreign_key, limit)
    elif relation.kind == "belongs_to":
        rows = await collection.find_within("id", [o.get(relation.local_key) for o in owners],
                                            limit=budget.server_limit(None), where=scope)
    else:
        ids = [i for o in owners for i in (_id_list(o.get(relation.local_key), limit))]
        rows = await collection.find_within("id", ids, limit=budget.server_limit(None), where=scope)
    budget.take(len(rows))
    return rows


def _id_list(value: Any, limit: int | None) -> list[str]:
    ids = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return ids[:limit] if limit else ids


def _cap_per_owner(rows: list[dict[str, Any]], key: str, limit: int | None) -> list[dict[str, Any]]:
    if not limit:
        return rows
    counts: dict[Any, int] = defaultdict(int)
    kept = []
    for row in rows:
        counts[row.get(key)] += 1
        if counts[row.get(key)] <= limit:
            kept.append(row)
    return kept


def _group(relation: ResourceRelation, owners: list[dict[str, Any]],
           targets: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    if relation.kind == "has_many":
        grouped: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for target in targets:
            grouped[target.get(relation.foreign_key)].append(target)
        return {o["id"]: grouped.get(o["id"], []) for o in owners}
    by_id = {t["id"]: t for t in targets}
    if relation.kind == "belongs_to":
        return {o["id"]: [by_id[o[relation.local_key]]] if o.get(relation.local_key) in by_id else [] for o in owners}
    return {o["id"]: [by_id[i] for i in _id_list(o.get(relation.local_key), None) if i in by_id] for o in owners}

