"""Transport-neutral filters, compiled to MongoDB queries only here.

Callers describe *what* they want (exact values, a literal search text, a
membership test, alternatives of exact values, comparisons from a fixed list, a keyset position);
the query shapes that reach the server are the few that `tests/storage/test_conformance.py` proves on
the embedded server and MongoDB.
"""
import re
from dataclasses import dataclass, field, replace
from collections.abc import Iterable
from typing import Any

from storage.clauses import (LISTS, MONGO, NOTHING, OPERATIONS, Condition, check_scalar,
                             condition_clause, merged_clauses, present, stored_value)
from storage.ids import to_object_id

__all__ = ["Condition", "Filter", "Keyset", "LISTS", "MONGO", "OPERATIONS", "RELEVANCE", "settled", "substring_test"]

# The sort key of a ranked text search: most relevant first (MongoDB's `{"$meta": "textScore"}`). Not a
# field name (no field starts with `$`), so no stored value is ever read for it.
RELEVANCE = "$relevance"

# The sort a page is read in, and the sort values of the record it starts after.
Keyset = tuple[tuple[tuple[str, int], ...], tuple[Any, ...]]


@dataclass(frozen=True)
class Filter:
    equals: dict[str, Any] = field(default_factory=dict)
    search_fields: tuple[str, ...] = ()
    search_text: str = ""
    # The field is among these values; it is `id` or holds one value per record (a relation key).
    within: tuple[str, tuple[Any, ...]] | None = None
    # Search also matches records whose `field` is one of these values (the ids of related records
    # whose own fields match the text): (field, values) alternatives beside `search_fields`. The
    # field holds one value (a belongs-to key), so a filter that fixes it decides its alternative.
    search_within: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    since: tuple[str, Any] | None = None    # field >= value
    before: tuple[str, Any] | None = None   # field < value
    # A read rule: a record matches when it satisfies every entry of at least one alternative; an
    # entry is an exact value or {operation: value} (`eq` or one of OPERATIONS). None: no rule; (): nothing.
    any_of: tuple[dict[str, Any], ...] | None = None
    conditions: tuple[Condition, ...] = ()
    # Only records after this position in this sort (a cursor page); the sort ends with "id".
    after: Keyset | None = None
    # The fields of the collection's text index (`searchable(text=True)`): where the server searches
    # by text, the search over them is one `$text` (see `by_text`).
    text_fields: tuple[str, ...] = ()

    def by_text(self) -> bool:
        """Whether the own fields' search can be `$text`: the text index covers only fields this search
        looks in (a field hidden from the user is in the index too, and `$text` would search it)."""
        return bool(self.search_text and self.text_fields and set(self.text_fields) <= set(self.search_fields))

    def to_mongo(self, substrings: bool = False, text: bool = False) -> dict[str, Any] | None:
        """The MongoDB filter, or None when the filter can match nothing. `substrings`: the server
        tests a plain search text as a substring itself (`substring_test`). `text`: the server searches
        the text index's fields with `$text` (MongoDB; the embedded server keeps the substring test)."""
        if self.search_text and self.search_within:
            settled_ = settled(self)
            if settled_ is not self:
                return settled_.to_mongo(substrings, text)
        clauses = _exact(self.equals)
        if clauses is None:
            return None
        if self.any_of is not None:
            rule = _alternatives(self.any_of)
            if rule is None:
                return None
            clauses.extend(rule)
        if self.search_text and (self.search_fields or self.search_within):
            # re.escape makes the user's text a literal: no pattern reaches the server. The inline
            # "(?i)" rather than $options "i" (alike on MongoDB's PCRE): the embedded server runs an
            # inline flag in SQL and reads every document in Python for $options, as for any $or.
            test = (substring_test(self.search_text) if substrings else None) or \
                {"$regex": "(?i)" + re.escape(self.search_text)}
            ranked = text and self.by_text()
            # `$text` may sit in a `$or` only when every other branch is read from an index: the
            # related ids' branches are `$in` on a relation key, which the index plan covers.
            branches = [{"$text": {"$search": self.search_text}}] if ranked else []
            branches += [{name: test} for name in self.search_fields if not (ranked and name in self.text_fields)]
            branches += [condition_clause(name, "in", values) for name, values in self.search_within if values]
            if not branches:
                return None  # only related fields are searched, and no related record matches
            clauses.append(branches[0] if len(branches) == 1 else {"$or": branches})
        plain_within: tuple[int, dict[str, Any]] | None = None  # a bounded `within`'s place, and it unbounded
        if self.within is not None:
            name, values = self.within
            for value in values:
                check_scalar(name, value)
            if name == "id":
                ids = [oid for oid in (to_object_id(v) for v in values) if oid is not None]
                clauses.append({"_id": {"$in": ids}})
            else:
                among_values = bounded_in(list(values))
                clauses.append({name: among_values})
                if "$gte" in among_values:
                    plain_within = (len(clauses) - 1, {name: {"$in": among_values["$in"]}})
        for bound, operator in ((self.since, "$gte"), (self.before, "$lt")):
            if bound is not None:
                check_scalar(bound[0], bound[1])
                clauses.append({bound[0]: {operator: bound[1]}})
        for condition in self.conditions:
            clauses.append(condition_clause(*condition))
        if self.after is not None:
            clauses.append(_keyset(*self.after))
        if not clauses:
            return {}
        merged = merged_clauses(clauses)
        if merged is None and plain_within is not None:  # another clause bounds that field: the plain `$in` joins it
            clauses[plain_within[0]] = plain_within[1]
            merged = merged_clauses(clauses)
        return merged if merged is not None else {"$and": clauses}


def bounded_in(values: list[Any]) -> dict[str, Any]:
    """`$in` of `values`, and with two or more strings their least and greatest as bounds: the same
    records where the field holds one value per record (a relation key). The embedded server then reads
    the range from the field's index and tests the `$in` on what it finds, where a bare `$in` is tested
    on every document (a page's comments: a third of the time); MongoDB intersects the bounds with the
    `$in`'s points. Not for arrays (the embedded server compares an array's range as a whole) nor `_id`
    (which it reads by `$in` already)."""
    if len(values) < 2 or any(type(value) is not str for value in values):
        return {"$in": values}
    return {"$gte": min(values), "$lte": max(values), "$in": values}


def substring_test(text: str) -> dict[str, str] | None:
    """The embedded server's own test for a case-insensitive substring (`$contains`: SQL's
    `lower(value) LIKE '%text%'`), about seven times faster there than the pattern, which it tests
    by calling Python for every document; None when the text is not one it tests alike: LIKE folds
    only ASCII letters' case and reads `%` and `_` as wildcards. (Python's case-insensitive pattern
    also takes the Kelvin sign for k and the long s for s, which LIKE does not.) MongoDB has no
    such operator: it is sent the pattern."""
    if not text.isascii() or "%" in text or "_" in text:
        return None
    return {"$contains": text}


def settled(where: Filter) -> Filter:
    """`where` with each related-ids alternative of its search decided when the filter itself fixes
    that field (an exact value, an `in` list, or a `nin` list that holds every id): when every value
    the filter admits is one of the ids, every record it admits matches the search, which goes; when
    none is (or the `nin` excludes them all), that alternative can match nothing and goes. The same
    records, in a plainer query: `{user_id: P, title: {$regex}}` rather than a `$or` beside
    `user_id: P` (a page of one parent's records; the embedded server reads any `$or` in Python)."""
    if not (where.search_text and where.search_within):
        return where
    within = []
    for name, ids in where.search_within:
        members = set(ids)
        admitted = _admitted(where, name)
        if admitted and members.issuperset(admitted):
            return replace(where, search_fields=(), search_text="", search_within=())
        excluded = admitted is not None and not members.intersection(admitted)
        excluded = excluded or any(field_ == name and operation == "nin" and members.issubset(values)
                                   for field_, operation, values in where.conditions)
        within.append((name, () if excluded else ids))
    within_ = tuple(within)
    return where if within_ == where.search_within else replace(where, search_within=within_)


def _admitted(where: Filter, name: str) -> tuple[Any, ...] | None:
    """The only values `where` lets field `name` hold, when it names them (None: not known)."""
    if name in where.equals:
        return (where.equals[name],)
    return next((tuple(values) for field_, operation, values in where.conditions
                 if field_ == name and operation == "in"), None)


def _exact(values: dict[str, Any]) -> list[dict[str, Any]] | None:
    """One clause per exact value, or None when one of them can match nothing (a malformed id)."""
    clauses: list[dict[str, Any]] = []
    for name, value in sorted(values.items()):
        check_scalar(name, value)
        if name == "id":
            oid = to_object_id(value) if isinstance(value, str) else None
            if oid is None:
                return None
            clauses.append({"_id": oid})
        elif value is None:
            # Missing or null, alike on every server: a bare null inside $or/$and matches
            # only missing fields on the embedded one.
            clauses.append({name: {"$in": [None]}})
        else:
            clauses.append({name: value})
    return clauses


def _rule(values: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The clauses of one alternative of a read rule: exact values, and {operation: value} entries."""
    clauses = _exact({name: value for name, value in values.items() if not isinstance(value, dict)})
    if clauses is None:
        return None
    for name, operations in sorted((n, v) for n, v in values.items() if isinstance(v, dict)):
        for operation, value in sorted(operations.items()):
            if operation != "eq":
                clauses.append(condition_clause(name, operation, value))
                continue
            exact = _exact({name: value})
            if exact is None:
                return None
            clauses.extend(exact)
    return clauses


def _alternatives(alternatives: tuple[dict[str, Any], ...]) -> list[dict[str, Any]] | None:
    """The clauses of a rule "any of these alternatives" (ANDed with the others); None: no match."""
    branches = []
    for values in alternatives:
        clauses = _rule(values)
        if clauses == []:
            return []  # an empty alternative admits every record
        if clauses is not None:
            branches.append(clauses[0] if len(clauses) == 1 else {"$and": clauses})
    if not branches:
        return None
    return [branches[0]] if len(branches) == 1 else [{"$or": branches}]


def _keyset(sort: tuple[tuple[str, int], ...], values: tuple[Any, ...]) -> dict[str, Any]:
    """Records after `values` in `sort`: (a > va) or (a = va and b > vb) or ... Null or missing
    values sort first, as MongoDB orders them."""
    branches = []
    equal: list[dict[str, Any]] = []
    for (name, direction), value in zip(sort, values, strict=True):
        key, stored = stored_value(name, value)
        if value is None:
            beyond = present(key) if direction == 1 else None  # nothing sorts below null
            same = {key: {"$in": [None]}}
        else:
            beyond = {key: {"$gt" if direction == 1 else "$lt": stored}}
            if direction == -1:
                beyond = {"$or": [beyond, {key: {"$in": [None]}}]}
            same = {key: stored}
        if beyond is not None:
            branches.append({"$and": [*equal, beyond]} if equal else beyond)
        equal.append(same)
    if not branches:
        return NOTHING
    return branches[0] if len(branches) == 1 else {"$or": branches}


def among(name: str, values: Iterable[Any], where: Filter | None = None) -> Filter | None:
    """`where` and `name` among `values` (None values left out); None when no value is left. `name`
    holds one value per record (a relation key): one value is then an equality, which the embedded
    server reads from an index, where it tests an `$in` on every document (about 10x the time)."""
    unique = tuple(dict.fromkeys(v for v in values if v is not None))
    where = where or Filter()
    if len(unique) == 1 and name not in where.equals:
        return replace(where, equals={**where.equals, name: unique[0]})
    return replace(where, within=(name, unique)) if unique else None
