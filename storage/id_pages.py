"""Cursor pages over the id order, read through the `_id` index on the embedded server.

A keyset over the id alone is `{"_id": {"$gt": position}}` (`$lt` walking back). MongoDB answers it
from the `_id` index. The embedded nx-27017 server evaluates every range on `_id` in Python over the
documents in id order, so a page deep in a collection costs a scan (about a second at 100,000
documents). It does translate the find command's `min` / `max` bounds on `_id` into SQL on its
`_id` column, which holds the id as its hex string: `min` (inclusive) with `_id != position` is
"after", `max` (exclusive) is "before". Those bounds are sent to the embedded server only.

Its date-aware query path ignores `min` / `max`, so every answer is checked: rows all beyond the
position are exactly the page (if the bound was dropped, the first rows of the whole order that are
beyond it are still the right ones); anything else and the caller reads the page the portable way.
"""
from dataclasses import replace
from typing import Any

from bson import ObjectId

from storage.filters import Filter
from storage.ids import to_object_id

IdBound = tuple[ObjectId, int]  # (position, direction: 1 after it in ascending order, -1 before it)


def id_bound(where: Filter, sort: list[tuple[str, int]] | None) -> IdBound | None:
    """The position of a keyset page read over the id alone, in the order the page is read."""
    if where.after is None:
        return None
    keys, values = where.after
    if len(keys) != 1 or keys[0][0] != "id" or list(keys) != list(sort or ()):
        return None  # several keys: storage/keyset_reads.py
    position = to_object_id(values[0]) if isinstance(values[0], str) else None
    return (position, keys[0][1]) if position is not None else None


def without_position(where: Filter, bound: IdBound) -> Filter:
    """The filter with the position itself excluded instead of the range (the bound does the rest)."""
    return replace(where, after=None, conditions=(*where.conditions, ("id", "ne", str(bound[0]))))


def bounded(cursor: Any, bound: IdBound) -> Any:
    """The find with `min` (ascending) or `max` (descending) on the id, as the embedded server stores
    it (a hex string; the driver wants a hint with either)."""
    position, direction = bound
    spec = [("_id", str(position))]
    cursor = cursor.hint([("_id", 1)])
    return cursor.min(spec) if direction == 1 else cursor.max(spec)


def all_beyond(documents: list[dict[str, Any]], bound: IdBound) -> bool:
    position, direction = bound
    return all(isinstance(d.get("_id"), ObjectId) and (d["_id"] > position if direction == 1 else d["_id"] < position)
               for d in documents)
