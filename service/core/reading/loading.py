"""Relation loading: one query per relation per level, whatever the number of rows.

On index every relation is loaded for the whole page at once (`$in`), uncapped.
On show, relations that are not eager are capped at `relatablePerPage`; relations
the model loads eagerly come back whole. Every load carries the related policy's
scope inside its query; related records are then filtered by its `show` and
serialized through their own repository.

Each related record is serialized once, and its resource object is shared by every owner that holds
it; the answer writes it (with what it holds) once per place. What a request may write is counted
that way while it loads, level by level: `query.max_related_rows` bounds the related records as
written (a post under each of its 100 comments, each post with its 100 comments: 10,100 rows), and
the answer's byte budget (`service.core.declarations.budget`) is charged with each record's encoded size, its own
attributes when it is built, then once more per further place, its nested relations included. Each
record's written size is worked out once. Both stop the request as soon as they are passed, before a
deeper level or a further relation is read.

A level whose owners the answer writes in several places (`posts?related=user.posts`: the user under
each of the page's posts, and all of the user's posts under it) would pass the rows cap only once the
levels above place it, after its records were read. Before reading such a has-many or belongs-to-many
level, the loader counts its records in scope (one count command) and refuses at once when that count,
times the fewest places an owner is written in, is over what is left: each of them is written at
least that often. Like the cap itself, this counts records in scope, before `show`.
"""
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.core.declarations import (READ, RELATIONSHIPS_MEMBER, Budget, Context, Resource, ResourceRelation, ability,
                                       budget_of, own_size, relation_size)
from service.core.kernel import BadRequest
from service.core.reading import visibility
from service.core.reading.computed import fill
from service.core.reading.fieldsets import Fieldsets
from service.core.reading.query import RelationTree
from service.core.reading.serializer import Attributes, resource_object, visible
from service.core.reading.visibility import Visible

if TYPE_CHECKING:
    from service.core.declarations import Restify

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


def require_readable(resource: Resource, tree: RelationTree, context: Context) -> None:
    """The relations a request asks for (`related`, GraphQL's relation fields) answer records of other
    repositories: the token needs `<r>:read` of each (MissingAbility names the first it lacks)."""
    for name, children in tree.items():
        target = resource.relations[name].target
        context.require(ability(target.name, READ))
        require_readable(target, children, context)


class Rows:
    """The related records one request may still write (`query.max_related_rows`; None: no cap)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0

    def server_limit(self, limit: int | None) -> int | None:
        """What a query may ask the server for: one row past the budget is enough to know it is spent."""
        if self.limit is None:
            return limit
        spare = self.limit - self.used + 1
        return min(limit, spare) if limit else spare

    def ahead(self, rows: int) -> None:
        """Refuses now when `rows` more would pass the cap: rows the levels above will write anyway."""
        if self.limit is not None and self.used + rows > self.limit:
            self.take(rows)

    def take(self, rows: int) -> None:
        self.used += rows
        if self.limit is not None and self.used > self.limit:
            message = (f"This request would load more than {self.limit} related records "
                       "(query.max_related_rows); ask for fewer records or relations.")
            raise BadRequest(message, {"related": [message]})


@dataclass
class Loaded:
    """The relationships of each owner, and what they add to it as written once: the bytes of its
    `relationships` member (0 when a fieldset leaves it out) and the related records, at every depth."""
    relationships: Relationships = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)

    def get(self, owner_id: str) -> dict[str, list[dict[str, Any]]] | None:
        return self.relationships.get(owner_id)


async def load_related(app: "Restify", resource: Resource, context: Context, owners: list[dict[str, Any]],
                       tree: RelationTree, cap: int | None = None, spent: Budget | None = None,
                       keep: Fieldsets | None = None, copies: bool | None = None) -> Loaded:
    """The relationships of every owner document, keyed by owner id. Related records bring their own
    model's eager relations too. `spent` is charged with every related record the answer writes
    (`keep`: the fieldsets the answer is trimmed to); with `copies` False, only once per record built
    (the caller charges the places: GraphQL, an MCP page cut to fit)."""
    spent = spent if spent is not None else budget_of(app, context)
    copies = spent.copies if copies is None else copies
    loader = _Loader(app, context, cap, Rows(app.settings.max_related_rows), spent, keep or {}, copies)
    return await loader.level(resource, owners, tree, frozenset(), True)


class _Loader:
    def __init__(self, app: "Restify", context: Context, cap: int | None, rows: Rows, spent: Budget,
                 keep: Fieldsets, copies: bool) -> None:
        self.app, self.context, self.cap = app, context, cap
        self.rows, self.spent, self.keep, self.copies = rows, spent, keep, copies

    async def level(self, resource: Resource, owners: list[dict[str, Any]], tree: RelationTree,
                    ancestors: frozenset[type], written: bool, places: dict[str, int] | None = None) -> Loaded:
        """The relations of `tree` for `owners` (records of `resource`); `written`: whether the answer
        writes these owners at all (a fieldset may leave out the relation that holds them); `places`:
        in how many places the answer writes each owner (None: once each, the page's records)."""
        loaded = Loaded({o["id"]: {} for o in owners}, {o["id"]: 0 for o in owners}, {o["id"]: 0 for o in owners})
        if not owners:
            return loaded
        keep = self.keep.get(resource.name)
        path = ancestors | {resource.model}
        shown_relations = 0
        copies = _Copies.of(owners, places)
        for name, children in tree.items():
            relation = resource.relations[name]
            shown = written and (keep is None or name in keep)
            shown_relations += shown
            limit = None if relation.decl.name in resource.model.eager else self.cap
            seen = visibility.visibility_of(self.app, relation.target, self.context.user)
            children = with_eager(relation.target, children, path | {relation.target.model})
            # An eager relation the token may not read comes back empty, like one whose policy refuses.
            readable = seen.entered and self.context.can(ability(relation.target.name, READ))
            targets = seen.shown(await self._fetch(relation, owners, limit, seen, copies, not children)) \
                if readable else []
            grouped = _group(relation, owners, targets)
            fields = visible(relation.target.fields(self.context))
            await fill(self.app, relation.target, self.context, targets, fields, self.keep.get(relation.target.name))
            writer = Attributes(fields)
            objects = {t["id"]: resource_object(relation.target.name, writer, t) for t in targets}
            target_keep = self.keep.get(relation.target.name)
            sizes = {i: own_size(o, target_keep) for i, o in objects.items()} if shown else dict.fromkeys(objects, 0)
            self.spent.charge(sum(sizes.values()))  # each record as it is built
            counts = dict.fromkeys(objects, 1)
            if children:
                nested = await self.level(relation.target, targets, children, path, shown,
                                          _places_of(grouped, places))
                for i, item in objects.items():
                    item["relationships"] = nested.relationships[i]
                    sizes[i] += nested.bytes[i]
                    counts[i] += nested.rows[i]
            self._place(loaded, name, grouped, objects, sizes, counts, shown)
        if shown_relations:  # `,"relationships":{...}` with a comma between relations, around them all
            wrapper = RELATIONSHIPS_MEMBER + shown_relations - 1
            for owner_id in loaded.bytes:
                loaded.bytes[owner_id] += wrapper
            if self.copies:
                self.spent.charge(wrapper * len(owners))
        return loaded

    def _place(self, loaded: Loaded, name: str, grouped: dict[str, list[dict[str, Any]]],
               objects: dict[str, dict[str, Any]], sizes: dict[str, int], counts: dict[str, int], shown: bool) -> None:
        """Puts each record under the owners that hold it, and counts the places past the first:
        the first was counted as it was built (and its nested records in their level)."""
        placed_bytes = placed_rows = 0
        for owner_id, items in grouped.items():
            ids = [t["id"] for t in items]
            loaded.relationships[owner_id][name] = [objects[i] for i in ids]
            rows = sum(counts[i] for i in ids)
            loaded.rows[owner_id] += rows
            placed_rows += rows
            if shown:
                size = relation_size(name, [sizes[i] for i in ids])
                loaded.bytes[owner_id] += size
                placed_bytes += size
        self.rows.take(placed_rows - sum(counts.values()))
        if self.copies and shown:
            self.spent.charge(placed_bytes - sum(sizes.values()))

    async def _fetch(self, relation: ResourceRelation, owners: list[dict[str, Any]],
                     limit: int | None, seen: Visible, copies: "_Copies", leaf: bool) -> list[dict[str, Any]]:
        """The related records of `owners` within the scope of `seen` (`show` is the caller's);
        `copies`: how often the answer writes them; `leaf`: no level is loaded beneath them."""
        collection = self.app.collection(relation.target)
        scope = seen.within()
        allowance = self.rows
        if relation.kind == "has_many":
            # With one owner (show) the cap goes to the server; with many it is applied per owner.
            single_limit = limit if len(owners) == 1 else None
            if copies.fewest > 1 and allowance.limit is not None and (single_limit or not limit):
                # A cap applied per owner would need a count per owner: only an uncapped load is counted.
                found = await collection.count_within(relation.foreign_key, [o["id"] for o in owners], where=scope)
                allowance.ahead(copies.pending + min(found, single_limit or found) * copies.fewest)
            rows = await collection.find_within(relation.foreign_key, [o["id"] for o in owners], sort=[("id", 1)],
                                                limit=allowance.server_limit(single_limit), where=scope)
            rows = _cap_per_owner(rows, relation.foreign_key, limit)
        elif relation.kind == "belongs_to":
            rows = await collection.find_within("id", [o.get(relation.local_key) for o in owners],
                                                limit=allowance.server_limit(None), where=scope)
        else:
            ids = [i for o in owners for i in (_id_list(o.get(relation.local_key), limit))]
            if copies.fewest > 1 and allowance.limit is not None \
                    and copies.pending + len(ids) * copies.fewest > allowance.limit - allowance.used:
                allowance.ahead(copies.pending + await collection.count_within("id", ids, where=scope) * copies.fewest)
            rows = await collection.find_within("id", ids, limit=allowance.server_limit(None), where=scope)
        allowance.take(len(rows))
        return rows


@dataclass(frozen=True)
class _Copies:
    """How often the answer writes the owners of one level: `fewest`, the places of the least written
    one (each record related to them is written at least that often), and `pending`, their places past
    the first, which the levels above count once this one is loaded."""
    fewest: int
    pending: int

    @staticmethod
    def of(owners: list[dict[str, Any]], places: dict[str, int] | None) -> "_Copies":
        if not places:
            return _Copies(1, 0)
        written = [places.get(o["id"], 0) for o in owners]
        return _Copies(min(written), sum(max(n - 1, 0) for n in written))


def _places_of(grouped: dict[str, list[dict[str, Any]]], places: dict[str, int] | None) -> dict[str, int]:
    """In how many places the answer writes each related record: once under each of its owners,
    as often as that owner is written."""
    written: dict[str, int] = defaultdict(int)
    for owner_id, items in grouped.items():
        for item in items:
            written[item["id"]] += places.get(owner_id, 1) if places else 1
    return written


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
