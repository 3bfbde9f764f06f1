"""Each repository's index plan, read from its declarations, and the comparison with what exists.

What gets an index, and why:
- a matchable or sortable field: `(field, 1), (id, 1)` — filters and sorts end on the id tie-break; and
  `created_at` on every collection (newest first, `sort=-created_at`; `updated_at` sorts without one);
- a relation key: a belongs_to local key (`user_id`) and a belongs_to_many id array (`tag_ids`) on the
  owner's collection, a has_many foreign key (`post_id`) on the related one;
- a relation sort (`BelongsTo(...).sortable("name")`): `(name, 1), (id, 1)` on the parent's collection,
  which reads the parents in that order (each parent's records then use the relation key's index). A
  relation search (`.searchable(...)`) gets none: a case-insensitive substring match cannot use an index,
  and its second step, `$in` of parent ids, uses the relation key's;
- text search (`searchable(text=True)`): one text index per collection over all its text fields, as
  MongoDB allows one; a server that is not sent `$text` (the embedded one) does not use it, so there it
  is neither made nor reported missing;
- soft deletes: `deleted_at` on the collection of a repository with `soft_deletes`;
- a `unique:` rule: a unique index on the collection and column it names (also the bearer tokens' hash);
  on a collection with soft deletes, `(column, 1), (deleted_at, 1)`: a trashed record's value (its
  stamp in the key) no longer takes the value, the live ones (`deleted_at` null or absent) share a key
  and still collide. The embedded server treats null keys as distinct, so there the index does not
  guard live records of such a collection against a race; the write path's own check still does;
- a field a policy scope filters on: the policy's `scope_fields`, if it declares them, else the keys of
  what `scope(None)` answers. A scope built from the user (`{"user_id": user.id}`) cannot be read
  without one, and calling it with a made-up user would run the application's code on a fake: such a
  policy declares `scope_fields = ("user_id",)`.
Indexes with the same keys on the same collection are one (unique when any reason asks for it), and
a plain one-key index is folded into the compound index that starts with its key, which serves it too.
A server that refuses `_id` in a compound index (the embedded one) gets `(field, 1)` instead of
`(field, 1), (id, 1)`: reported as "not supported by this server", and not as drift.
"""
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from service.core.declarations.constraints import Target
from service.core.declarations.context import Context
from service.core.declarations.description import describe
from service.core.declarations.fields import DELETED_AT, TIMESTAMPS, Field
from service.core.declarations.policies import AnyOf
from service.core.declarations.registry import Registry, Resource
from storage import TEXT, Database, ExistingIndex, IndexRefused, IndexSupport

log = logging.getLogger("restify")

Keys = tuple[tuple[str, int | str], ...]
TOKENS = ("personal_access_tokens", "token_hash")  # bearer tokens are found by their hash


@dataclass
class PlannedIndex:
    collection: str
    keys: Keys
    unique: bool = False
    reasons: list[str] = field(default_factory=list)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.keys)

    @property
    def text(self) -> bool:
        return any(direction == TEXT for _, direction in self.keys)

    def keys_for(self, support: IndexSupport) -> Keys:
        """The keys this server accepts: without the id tie-break where `_id` may not be compounded;
        none for a text index where the server is not sent `$text`."""
        if self.text and not support.text_search:
            return ()
        if support.id_in_compound or len(self.keys) == 1:
            return self.keys
        return tuple(key for key in self.keys if key[0] != "id")


class Plan:
    """The planned indexes, merged by (collection, keys)."""

    def __init__(self) -> None:
        self._by_keys: dict[tuple[str, Keys], PlannedIndex] = {}

    def add(self, collection: str, keys: Keys, reason: str, unique: bool = False) -> None:
        planned = self._by_keys.setdefault((collection, keys), PlannedIndex(collection, keys))
        planned.unique = planned.unique or unique
        if reason not in planned.reasons:
            planned.reasons.append(reason)

    @property
    def indexes(self) -> list[PlannedIndex]:
        kept = [p for p in self._by_keys.values() if not self._fold(p)]
        return sorted(kept, key=lambda p: (p.collection, not p.unique, tuple((n, str(d)) for n, d in p.keys)))

    def _fold(self, planned: PlannedIndex) -> bool:
        """Merges a plain one-key index into a compound one that starts with its key, if any."""
        if planned.unique or len(planned.keys) > 1:
            return False
        wider = next((p for p in self._by_keys.values() if p.collection == planned.collection
                      and len(p.keys) > 1 and p.keys[0] == planned.keys[0]), None)
        if wider is None:
            return False
        wider.reasons.extend(r for r in planned.reasons if r not in wider.reasons)
        return True

    def collections(self) -> list[str]:
        return sorted({p.collection for p in self._by_keys.values()})


def unique_plan(registry: Registry) -> Plan:
    """The unique indexes alone: `unique:` rules must hold whatever `database.auto_indexes` says."""
    plan = Plan()
    trashing = {r.collection for r in registry.resources.values() if r.soft_deletes}
    for resource in registry.resources.values():
        for collection, column in unique_indexes(resource.fields(Context(action="declaration"))):
            if column not in ("id", "_id"):  # `_id` is unique already
                keys: Keys = ((column, 1), (DELETED_AT, 1)) if collection in trashing else ((column, 1),)
                plan.add(collection, keys, f"unique rule of {resource.name}", unique=True)
    plan.add(TOKENS[0], ((TOKENS[1], 1),), "bearer tokens", unique=True)
    return plan


def index_plan(registry: Registry) -> Plan:
    """Every index the declarations ask for."""
    plan = unique_plan(registry)
    for resource in registry.resources.values():
        _field_indexes(plan, resource)
        _relation_indexes(plan, resource)
        for name in scope_fields(registry, resource):
            plan.add(resource.collection, ((name, 1),), "policy scope")
    return plan


def _field_indexes(plan: Plan, resource: Resource) -> None:
    # Newest first (`sort=-created_at`) is the common list order on every repository; `updated_at` sorts
    # too but gets no index of its own: one more per collection for a rarer order.
    plan.add(resource.collection, ((TIMESTAMPS[0], 1), ("id", 1)), "sortable")
    if resource.soft_deletes:  # every read asks whether a record is trashed; a purge, since when
        plan.add(resource.collection, ((DELETED_AT, 1),), "soft deletes")
    declared = resource.fields(Context(action="declaration"))
    texts = sorted(item.name for item in declared if item.is_text)
    if texts:
        plan.add(resource.collection, tuple((name, TEXT) for name in texts), "text search")
    for item in declared:
        for flag, reason in ((item.is_matchable, "matchable"), (item.is_sortable, "sortable")):
            if flag:
                plan.add(resource.collection, ((item.name, 1), ("id", 1)), reason)
        if item.is_groupable:  # an aggregation's $group reads its key in the index's order
            plan.add(resource.collection, ((item.name, 1),), "groupable")


def _relation_indexes(plan: Plan, resource: Resource) -> None:
    for relation in resource.relations.values():
        reason = f"{relation.kind} {relation.name}"
        if relation.kind == "has_many":
            plan.add(relation.target.collection, ((relation.foreign_key, 1),), f"{reason} of {resource.name}")
        elif relation.local_key != "id":
            plan.add(resource.collection, ((relation.local_key, 1),), reason)
        for name in (n for n in relation.sort_fields if n != "id"):  # the id order has its own index
            plan.add(relation.target.collection, ((name, 1), ("id", 1)),
                     f"sort of {resource.name} by {relation.name}.{name}")


def scope_fields(registry: Registry, resource: Resource) -> tuple[str, ...]:
    """The fields the model's policy scope filters on (see the module's comment)."""
    policy = registry.policies.registered(resource.model)
    if policy is None:  # denied everything: nothing to filter on
        return ()
    declared = getattr(policy, "scope_fields", None)
    if declared is not None:
        return tuple(declared)
    try:
        scope = policy.scope(None)
    except Exception:  # a scope that needs a user: only `scope_fields` can name its fields
        return ()
    alternatives = scope.alternatives if isinstance(scope, AnyOf) else (scope,) if isinstance(scope, Mapping) else ()
    return tuple(dict.fromkeys(name for alternative in alternatives for name in alternative if name != "id"))


# -- comparing with the database and creating -----------------------------------------------

@dataclass
class IndexState:
    planned: PlannedIndex
    keys: Keys                     # what this server gets: the planned keys, or those it accepts
    # "exists" | "missing" | "not unique" | "created" | "refused: ..." | "not used" (a text index the
    # server is not sent `$text` for)
    status: str
    existing: ExistingIndex | None = None

    @property
    def unsupported(self) -> bool:
        return bool(self.keys) and self.keys != self.planned.keys


def _same_keys(keys: Keys, existing: ExistingIndex, support: IndexSupport) -> bool:
    if support.reports_direction or any(direction == TEXT for _, direction in keys):
        return existing.keys == keys
    return tuple(name for name, _ in existing.keys) == tuple(name for name, _ in keys)  # listed ascending


def compare(planned: PlannedIndex, existing: list[ExistingIndex], support: IndexSupport) -> IndexState:
    """By keys only: the embedded server renames indexes, so names say nothing."""
    keys = planned.keys_for(support)
    if not keys:
        return IndexState(planned, keys, "not used")
    found = next((index for index in existing if _same_keys(keys, index, support)), None)
    if found is None:
        return IndexState(planned, keys, "missing")
    return IndexState(planned, keys, "exists" if found.unique or not planned.unique else "not unique", found)


def extra_indexes(states: list[IndexState], existing: list[ExistingIndex]) -> list[ExistingIndex]:
    """Existing indexes no planned one accounts for (the `_id` one aside)."""
    matched = [state.existing for state in states if state.existing is not None]
    return [index for index in existing if index.keys != (("id", 1),) and index not in matched]


async def states(db: Database, plan: Plan,
                 create: bool = False) -> dict[str, tuple[list[IndexState], list[ExistingIndex]]]:
    """Per collection: each planned index's state and the indexes there that are not planned. With
    `create`, what is missing is made first: a unique index the server refuses raises IndexRefused
    (`unique:` rules rely on it); any other refusal is logged and reported."""
    support = await db.index_support()
    found: dict[str, tuple[list[IndexState], list[ExistingIndex]]] = {}
    for collection in plan.collections():
        existing = await db.collection(collection).indexes()
        compared = []
        for planned in (p for p in plan.indexes if p.collection == collection):
            state = compare(planned, existing, support)
            if create and state.status in ("missing", "not unique"):
                replaced = state.existing
                await _create(db, state)
                if state.status == "created":  # a later planned index may be served by it
                    assert state.existing is not None  # _create sets it with the status
                    existing = [index for index in existing if index is not replaced] + [state.existing]
            compared.append(state)
        found[collection] = (compared, extra_indexes(compared, existing))
    return found


async def _create(db: Database, state: IndexState) -> None:
    """Makes the index; a plain one with the same keys gives way to a unique one, which serves
    every query it did (the embedded server would otherwise keep the plain one and say nothing)."""
    collection, unique = state.planned.collection, state.planned.unique
    plain = state.existing
    try:
        if plain is not None:
            await db.collection(collection).drop_index(plain.name)
        await db.collection(collection).create_index(state.keys, unique=unique)
    except IndexRefused as error:
        if unique:
            if plain is not None:  # the values repeat: keep the plain index the queries had
                await db.collection(collection).create_index(plain.keys)
            raise IndexRefused(f"the unique index {collection} {list(state.planned.fields)} cannot be "
                               f"made: {error}") from None
        state.status = f"refused: {error}"
        log.warning("index %s %s not created: %s", collection, list(state.planned.fields), error)
        return
    state.status = "created"
    state.existing = ExistingIndex("", state.keys, unique)


def unique_indexes(fields: list[Field]) -> set[tuple[str, str]]:
    """(collection, column) pairs that `unique:` rules back with a unique index."""
    targets: set[Target] = set()
    for declared in fields:
        description = describe(declared)
        targets.update(description.store.unique, description.update.unique)
    return {(target.collection, target.column) for target in targets}
