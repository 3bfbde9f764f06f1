"""Transport-neutral filters, compiled to MongoDB queries only here.

Callers describe *what* they want (exact values, a literal search text, a
membership test, alternatives of exact values); the query shapes that reach the server are the few that
`tests/storage/test_conformance.py` proves on the embedded server and MongoDB.
"""
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from storage.ids import to_object_id

_SCALARS = (str, int, float, bool, type(None), datetime)


@dataclass(frozen=True)
class Filter:
    equals: dict[str, Any] = field(default_factory=dict)
    search_fields: tuple[str, ...] = ()
    search_text: str = ""
    within: tuple[str, tuple[Any, ...]] | None = None
    since: tuple[str, Any] | None = None    # field >= value
    before: tuple[str, Any] | None = None   # field < value
    # A read rule: a record matches when it has every value of at least one alternative.
    # None: no rule; (): nothing matches.
    any_of: tuple[dict[str, Any], ...] | None = None

    def to_mongo(self) -> dict[str, Any] | None:
        """The MongoDB filter, or None when the filter can match nothing."""
        clauses = _exact(self.equals)
        if clauses is None:
            return None
        if self.any_of is not None:
            rule = _alternatives(self.any_of)
            if rule is None:
                return None
            clauses.extend(rule)
        if self.search_text and self.search_fields:
            # re.escape makes the user's text a literal: no pattern reaches the server.
            pattern = re.escape(self.search_text)
            clauses.append({"$or": [{name: {"$regex": pattern, "$options": "i"}} for name in self.search_fields]})
        if self.within is not None:
            name, values = self.within
            for value in values:
                _check_scalar(name, value)
            if name == "id":
                ids = [oid for oid in (to_object_id(v) for v in values) if oid is not None]
                clauses.append({"_id": {"$in": ids}})
            else:
                clauses.append({name: {"$in": list(values)}})
        for bound, operator in ((self.since, "$gte"), (self.before, "$lt")):
            if bound is not None:
                _check_scalar(bound[0], bound[1])
                clauses.append({bound[0]: {operator: bound[1]}})
        if not clauses:
            return {}
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _exact(values: dict[str, Any]) -> list[dict[str, Any]] | None:
    """One clause per exact value, or None when one of them can match nothing (a malformed id)."""
    clauses = []
    for name, value in sorted(values.items()):
        _check_scalar(name, value)
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


def _alternatives(alternatives: tuple[dict[str, Any], ...]) -> list[dict[str, Any]] | None:
    """The clauses of a rule "any of these exact-value sets" (ANDed with the others); None: no match."""
    branches = []
    for values in alternatives:
        clauses = _exact(values)
        if clauses == []:
            return []  # an empty alternative admits every record
        if clauses is not None:
            branches.append(clauses[0] if len(clauses) == 1 else {"$and": clauses})
    if not branches:
        return None
    return [branches[0]] if len(branches) == 1 else [{"$or": branches}]


def _check_scalar(name: str, value: Any) -> None:
    # Defence in depth: a dict here would be an operator smuggled past validation.
    if not isinstance(value, _SCALARS):
        raise TypeError(f"filter value for {name!r} must be a scalar, got {type(value).__name__}")
