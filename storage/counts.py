"""Counts kept a few seconds for the filters a caller asks to keep (expensive ones: a search must read
every document to count its matches, and paging through its results asks the same count on every page),
and a collection's estimated count (the total of a list without filters, asked by every page of it).

A kept count is used only while no write to its collection was made in this process since it was
counted (every write of a `Collection` says so once it is done; a transaction's end, committed or not,
counts as a write to every collection) and for at most the seconds the caller gave. Writes by another
process or another program are seen once those seconds have passed.
"""
import time
from typing import Any

_MAX_KEPT = 1000  # counts kept; past it, those whose time is over are forgotten, then the oldest

_writes: dict[tuple[str, str], int] = {}  # (database, collection) -> writes made to it in this process
_epoch = 0  # transactions ended in this process
_kept: dict[tuple[str, str, str], tuple[tuple[int, int], float, int]] = {}  # key -> (generation, until, count)


def _place(collection: Any) -> tuple[str, str]:
    return collection.database.name, collection.name


def generation(collection: Any) -> tuple[int, int]:
    return _epoch, _writes.get(_place(collection), 0)


def wrote(collection: Any) -> None:
    """A write to `collection` is done: the counts kept for it are stale."""
    place = _place(collection)
    _writes[place] = _writes.get(place, 0) + 1


def transaction_ended() -> None:
    global _epoch
    _epoch += 1


def kept(collection: Any, key: str) -> int | None:
    """The count kept for `key` in `collection`, if still good."""
    found = _kept.get((*_place(collection), key))
    if found is None or found[0] != generation(collection) or found[1] <= time.monotonic():
        return None
    return found[2]


def keep(collection: Any, key: str, counted_at: tuple[int, int], count: int, seconds: float) -> None:
    """Keeps `count`, counted when the collection's generation was `counted_at` (read before counting, so a
    write that ended meanwhile makes it stale at once)."""
    now = time.monotonic()
    if len(_kept) >= _MAX_KEPT:
        for name in [name for name, (_, until, _) in _kept.items() if until <= now] or [next(iter(_kept))]:
            del _kept[name]
    _kept[(*_place(collection), key)] = (counted_at, now + seconds, count)
