"""The query language's conditions tested on one document in the process, as the database would
answer them (storage/filters.py compiles the same conditions to queries): live feeds judge each
changed record with it.

A missing field is null; `ne` and `nin` also match it, `null: true` matches it; equality is
Python's, so a boolean the embedded server stored as 1/0 equals True/False (as `audience.matches`
has it); an ordering compares values of one kind only (numbers with numbers, texts with texts), as
MongoDB does, and never matches null.
"""
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

Condition = tuple[str, str, Any]


def satisfies(conditions: Iterable[Condition], document: Mapping[str, Any]) -> bool:
    """Whether `document` meets every condition (they combine with AND)."""
    return all(_meets(document.get(name), operation, value) for name, operation, value in conditions)


def _meets(stored: Any, operation: str, value: Any) -> bool:
    if operation == "eq":
        return stored == value
    if operation == "null":
        return (stored is None) == bool(value)
    if operation == "in":
        return stored in value
    if operation == "nin":
        return stored not in value
    if operation == "ne":
        return stored != value
    if _kind(value) is None or _kind(stored) != _kind(value):
        return False
    if operation == "gt":
        return stored > value
    if operation == "gte":
        return stored >= value
    if operation == "lt":
        return stored < value
    if operation == "lte":
        return stored <= value
    raise ValueError(f"unknown filter operation {operation!r}")


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
