"""The query language's conditions tested on one document in the process, as the database would
answer them (storage/filters.py compiles the same conditions to queries): live feeds judge each
changed record with it. Each condition's test is its entry in `service.core.kernel.operators.CONDITIONS`.

A missing field is null; `ne` and `nin` also match it, `null: true` matches it; equality is
Python's, so a boolean the embedded server stored as 1/0 equals True/False (as `audience.matches`
has it); an ordering compares values of one kind only (numbers with numbers, texts with texts), as
MongoDB does, and never matches null.

Two compound conditions join others (a filter object's `any` and `not`; its `all` is plain AND):
`("", ANY, (branch, ...))` holds when one branch (a tuple of conditions, ANDed) holds, and
`("", NOT, branch)` when the branch does not; a branch may hold compounds again.
"""
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from service.core.kernel.operators import CONDITIONS

Condition = tuple[str, str, Any]
ANY = "any"  # ("", ANY, (branch, ...)): one of the branches holds
NOT = "not"  # ("", NOT, branch): the branch does not hold
COMPOUNDS = frozenset({ANY, NOT})


@dataclass(frozen=True)
class Through:
    """A condition's value that asks of related records (`service.core.reading.relation_filters`;
    read into ids before a query runs, never tested on one document): those
    of `relation` matching `equals` and `conditions` (a BelongsTo's filterable fields), or any at all
    (`exists`, `has=`)."""
    relation: str
    equals: tuple[tuple[str, Any], ...] = ()
    conditions: tuple[Condition, ...] = ()
    exists: bool = False
    label: str = field(default="", compare=False, repr=False)  # where it was sent, for a refusal


def relation_conditions(conditions: Iterable[Condition]) -> list[Through]:
    """The Throughs of `conditions`, inside compounds too."""
    return [value for _, _, value in leaves(conditions) if isinstance(value, Through)]


def satisfies(conditions: Iterable[Condition], document: Mapping[str, Any]) -> bool:
    """Whether `document` meets every condition (they combine with AND)."""
    return all(_holds(document, name, operation, value) for name, operation, value in conditions)


def leaves(conditions: Iterable[Condition]) -> Iterator[Condition]:
    """The plain conditions of `conditions`, inside compounds too."""
    for condition in conditions:
        if condition[1] == ANY:
            for branch in condition[2]:
                yield from leaves(branch)
        elif condition[1] == NOT:
            yield from leaves(condition[2])
        else:
            yield condition


def with_values(conditions: Iterable[Condition], change: Callable[[str, Any], Any]) -> tuple[Condition, ...]:
    """`conditions` with each plain condition's value replaced by `change(field, value)`, inside compounds too."""
    changed: list[Condition] = []
    for name, operation, value in conditions:
        if operation == ANY:
            changed.append((name, operation, tuple(with_values(branch, change) for branch in value)))
        elif operation == NOT:
            changed.append((name, operation, with_values(value, change)))
        else:
            changed.append((name, operation, change(name, value)))
    return tuple(changed)


def _holds(document: Mapping[str, Any], name: str, operation: str, value: Any) -> bool:
    if operation == ANY:
        return any(satisfies(branch, document) for branch in value)
    if operation == NOT:
        return not satisfies(value, document)
    return _meets(document.get(name), operation, value)


def _meets(stored: Any, operation: str, value: Any) -> bool:
    condition = CONDITIONS.get(operation)
    if condition is None:
        raise ValueError(f"unknown filter operation {operation!r}")
    if condition.ordered and (_kind(value) is None or _kind(stored) != _kind(value)):
        return False
    return condition.test(stored, value)


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, datetime):
        return "date"
    return None
