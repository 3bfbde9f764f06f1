"""Refusing an amplifying request before its page is read whole.

`posts?user_id=<me>&perPage=100&related=user.posts` writes the user under each of the page's posts and
all of the user's posts under each of those: relation loading refuses it (`query.max_related_rows`)
before reading `user.posts`, but only once the page itself is read, and a page of large records is the
largest single read the request makes. So when the relations asked for can write records in several
places (a to-many level beneath a belongs-to or belongs-to-many one, at any depth), the page's keys are
read first (the id, the sort's keys and the keys of the first relations), the levels above the last are
loaded from them, and each last level that sits beneath records written in several places is counted,
not read: the same refusal, before the page is read whole. A request that passes then reads as usual.
"""
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from service.core.declarations import Budget, Context, Resource, ResourceRelation
from service.core.reading.cursors import Page
from service.core.reading.loading import Rows, _Copies, _Loader, with_eager
from service.core.reading.query import RelationTree
from service.core.reading.visibility import Visible

if TYPE_CHECKING:
    from service.core.declarations import Restify

_TO_MANY = ("has_many", "belongs_to_many")
_SHARED = ("belongs_to", "belongs_to_many")  # their records may be held by several owners


def amplifies(resource: Resource, tree: RelationTree, shared: bool = False,
              path: frozenset[type] = frozenset()) -> bool:
    """Whether `tree` (eager relations included) loads a to-many level beneath records the answer may
    write in several places."""
    for name, children in tree.items():
        relation = resource.relations[name]
        if shared and relation.kind in _TO_MANY:
            return True
        nested = with_eager(relation.target, children, path | {relation.target.model})
        if amplifies(relation.target, nested, shared or relation.kind in _SHARED, path | {relation.target.model}):
            return True
    return False


def key_fields(resource: Resource, tree: RelationTree) -> tuple[str, ...]:
    """What the first level of `tree` reads of its owners: their id and their keys of it."""
    return ("id", *sorted({resource.relations[name].local_key for name in tree
                           if resource.relations[name].kind != "has_many"}))


class _Planner(_Loader):
    """Relation loading that counts, rather than reads, each last level beneath shared owners."""

    async def _fetch(self, relation: ResourceRelation, owners: list[dict[str, Any]],
                     limit: int | None, seen: Visible, copies: _Copies, leaf: bool) -> list[dict[str, Any]]:
        if not leaf:
            return await super()._fetch(relation, owners, limit, seen, copies, leaf)
        if copies.fewest > 1 and relation.kind in _TO_MANY:
            collection = self.app.collection(relation.target)
            key, values = ((relation.foreign_key, [o["id"] for o in owners]) if relation.kind == "has_many" else
                           ("id", [i for o in owners for i in o.get(relation.local_key) or [] if isinstance(i, str)]))
            found = await collection.count_within(key, values, where=seen.within())
            self.rows.ahead(copies.pending + found * copies.fewest)
        return []


async def refuse_before_reading(app: "Restify", resource: Resource, context: Context, tree: RelationTree,
                                read: Callable[[tuple[str, ...]], Awaitable[Page]]) -> None:
    """When `tree` amplifies: reads the page's keys (`read(fields)`) and raises what relation loading
    would raise on the rows cap, counting each last level beneath shared owners instead of reading it."""
    limit = app.settings.max_related_rows
    if limit is None or not amplifies(resource, tree):
        return
    keys = await read(key_fields(resource, tree))
    planner = _Planner(app, context, None, Rows(limit), Budget(None), {}, copies=True)
    await planner.level(resource, keys.documents, tree, frozenset(), True)
