"""One condition to one MongoDB clause: the operations a Condition may name and the operator each
compiles to, the compounds that join conditions, and the small shapes every filter is built of
(`storage.filters` puts them together into a query)."""
from datetime import datetime
from typing import Any

from storage.ids import to_object_id

SCALARS = (str, int, float, bool, type(None), datetime)
# The operations a Condition may name, and the MongoDB operator each compiles to: the one mapping (the
# service's operator table names these operations, and tests hold the two together). `in` and `nin`
# take a list; `null` (true: missing or null; false: present) has a shape of its own. Anything else is
# refused before a query is built.
MONGO = {"ne": "$ne", "gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte", "in": "$in", "nin": "$nin"}
LISTS = frozenset({"in", "nin"})
ORDERINGS = frozenset({"gt", "gte", "lt", "lte"})
OPERATIONS = frozenset({*MONGO, "null"})
# Compounds join conditions: ("", "any", (branch, ...)) is `$or` of the branches (each a tuple of
# conditions, ANDed), ("", "not", branch) is `$nor` of one branch (MongoDB has no top-level `$not`; `$nor`
# also matches records that lack the fields, as the matcher's "not" does).
ANY, NOT = "any", "not"
# (field, operation, value): value is a scalar, a tuple of scalars for in/nin, a bool for null.
Condition = tuple[str, str, Any]


def merged_clauses(clauses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The clauses as one document when no two of them say different things about one key (the
    operators of one field join: `{"v": {"$gte": 1, "$lt": 8}}`); None otherwise. The same query on
    MongoDB, and the embedded server runs a plain document in SQL where any `$and` is read in Python.
    A `$or` stays inside `$and`: beside other keys, the embedded server's `$match` ignores it. A `$text`
    joins the others: inside `$and` the embedded server tests its words as a substring, off its index."""
    merged: dict[str, Any] = {}
    for clause in clauses:
        for key, value in clause.items():
            if key.startswith("$") and key != "$text":
                return None
            if key not in merged:
                merged[key] = value
                continue
            old = merged[key]
            operators = isinstance(old, dict) and isinstance(value, dict) \
                and all(k.startswith("$") for k in (*old, *value)) and not set(old) & set(value)
            if not operators:
                return None
            merged[key] = {**old, **value}
    return merged


def check_scalar(name: str, value: Any) -> None:
    # Defence in depth: a dict here would be an operator smuggled past validation.
    if not isinstance(value, SCALARS):
        raise TypeError(f"filter value for {name!r} must be a scalar, got {type(value).__name__}")


def stored_value(name: str, value: Any) -> tuple[str, Any]:
    """The stored name and value of a compared field: `id` is `_id`, an ObjectId (None if malformed)."""
    check_scalar(name, value)
    if name == "id":
        return "_id", to_object_id(value) if isinstance(value, str) else None
    return name, value


NOTHING: dict[str, Any] = {"_id": {"$in": []}}
EVERYTHING: dict[str, Any] = {}


def present(name: str) -> dict[str, Any]:
    # `$ne: null` also matches missing fields on the embedded server: $exists with $nin is alike everywhere.
    return {name: {"$exists": True, "$nin": [None]}}


def _branch(conditions: tuple[Condition, ...], negated: bool = False) -> dict[str, Any]:
    """One branch of a compound: its conditions ANDed ({} for none: every record). `negated`: it goes
    inside `$nor`, where an ordering also says "present" (below)."""
    clauses = [clause for clause in (condition_clause(*condition, negated=negated) for condition in conditions)
               if clause]
    if not clauses:
        return {}
    merged = merged_clauses(clauses)  # one document where it can be: `{"v": {"$gte": 1, "$lte": 5}}`
    return merged if merged is not None else {"$and": clauses}


def _compound(operation: str, value: Any, negated: bool) -> dict[str, Any]:
    if operation == NOT:
        branch = _branch(value, negated=True)
        return NOTHING if not branch else {"$nor": [branch]}
    branches = [_branch(branch, negated) for branch in value]
    if not branches:
        return NOTHING
    if any(not branch for branch in branches):
        return EVERYTHING  # an empty branch admits every record
    return branches[0] if len(branches) == 1 else {"$or": branches}


def condition_clause(name: str, operation: str, value: Any, negated: bool = False) -> dict[str, Any]:
    if operation in (ANY, NOT):
        return _compound(operation, value, negated)
    if operation not in OPERATIONS:
        raise ValueError(f"unknown filter operation {operation!r}")
    if operation == "null":
        key = "_id" if name == "id" else name
        return {key: {"$in": [None]}} if value else present(key)
    if operation in LISTS:
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"filter value for {name!r} {operation} must be a list, got {type(value).__name__}")
        pairs = [stored_value(name, item) for item in value]
        key = "_id" if name == "id" else name
        items = [item for _, item in pairs if not (name == "id" and item is None)]
        return {key: {MONGO[operation]: items}}
    key, stored = stored_value(name, value)
    if name == "id" and stored is None:  # a malformed id is no record: != matches all, the rest none
        return EVERYTHING if operation == "ne" else NOTHING
    if value is None:
        # Ordering against null matches nothing on MongoDB; "not null" is the one useful reading.
        return present(key) if operation == "ne" else NOTHING
    if negated and operation in ORDERINGS:
        # The same records on MongoDB (an ordering never matches a missing or null value); the embedded
        # server tests a date's ordering in SQL, where a missing date makes `$nor` drop the record.
        return {key: {**present(key)[key], MONGO[operation]: stored}}
    return {key: {MONGO[operation]: stored}}
