"""The query language's conditions tested on one document in the process, as the database would
answer them (storage/filters.py compiles the same conditions to queries): live feeds judge each
changed record with it. Each condition's test is its entry in `service.core.kernel.operators.CONDITIONS`.

A missing field is null; `ne` and `nin` also match it, `null: true` matches it; equality is
Python's, so a boolean the embedded server stored as 1/0 equals True/False (as `audience.matches`
has it); an ordering compares values of one kind only (numbers with numbers, texts with texts), as
MongoDB does, and never matches null.
"""
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from service.core.kernel.operators import CONDITIONS

Condition = tuple[str, str, Any]


def satisfies(conditions: Iterable[Condition], document: Mapping[str, Any]) -> bool:
    """Whether `document` meets every condition (they combine with AND)."""
    return all(_meets(document.get(name), operation, value) for name, operation, value in conditions)


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
