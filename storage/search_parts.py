"""A search through related ids, read as disjoint plain parts instead of one `$or`.

A search over the own fields F and the ids of related records (`search_within`: k1 in ids1, k2 in
ids2 ...) is, in MongoDB's words, one `$or` of its alternatives. The embedded nx-27017 server reads
any `$or` in Python over every document of the collection (about 130 ms at 5,000 posts, seconds at
100,000, for every page and count), while each alternative alone is a plain query it runs in SQL. The
same records are the union of disjoint parts, each a plain query:

    k1 in ids1
    k2 in ids2, k1 nin ids1
    ...
    F matches the text, k1 nin ids1, k2 nin ids2 ...   (the own fields' part, when there are some)

(`nin` is exactly "not in": it also admits a missing or null key, which `in` never matches.) A count
is the sum of the parts' counts. A page (sort, skip, limit) merges the parts in the sort: each part
is read in its sort in chunks of at most CHUNK records (the next chunk after the last record read, a
keyset page), only as far as the page needs, so no command reads more than a chunk; the records are
merged by their sort values. Each chunk must come back in that order (as Python compares the values,
MongoDB's order of types: null, numbers, text, booleans, dates), else the caller sends the one
portable query. MongoDB answers the `$or` from its indexes in one query: this is for the embedded
server only (`IndexSupport.or_indexed`).
"""
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from storage.filters import Condition, Filter, settled

Sort = list[tuple[str, int]]
Reader = Callable[[Filter, Sort, int], Awaitable[list[dict[str, Any]]]]  # (part, sort, limit) -> records
CHUNK = 200  # records one command reads of a part


def search_parts(where: Filter) -> list[Filter] | None:
    """The disjoint plain parts of `where`'s search, or None when it has no alternatives of related
    ids (or, once the filter decides them, at most one alternative is left: no `$or` to avoid)."""
    where = settled(where)
    if not where.search_text:
        return None
    within = [(name, ids) for name, ids in where.search_within if ids]
    if not within or len(within) + (1 if where.search_fields else 0) < 2:
        return None
    base = replace(where, search_fields=(), search_text="", search_within=())
    parts: list[Filter] = []
    earlier: list[Condition] = []
    for name, ids in within:
        parts.append(replace(base, conditions=(*base.conditions, *earlier, (name, "in", ids))))
        earlier.append((name, "nin", ids))
    if where.search_fields:
        parts.append(replace(where, search_within=(), conditions=(*where.conditions, *earlier)))
    return parts


class OutOfOrder(Exception):
    """A part's records did not come back in the order the merge compares them."""


async def merged(read: Reader, parts: list[Filter], sort: Sort | None, skip: int, limit: int) -> list[dict[str, Any]]:
    """Records [skip, skip + limit) of the union of `parts` in `sort` (limit 0: all after skip).
    OutOfOrder when a part's answer disagrees with the merge's order."""
    sort = list(sort or ())
    needed = skip + limit if limit else 0
    if not by_keyset(sort):  # no exact position to read on from: each part once, then sorted
        rows: list[dict[str, Any]] = []
        for part in parts:
            found = await read(part, sort, needed)
            if any(_compare(a, b, sort) > 0 for a, b in zip(found, found[1:], strict=False)):
                raise OutOfOrder()
            rows += found
        rows.sort(key=functools.cmp_to_key(lambda a, b: _compare(a, b, sort)))
        return rows[skip:needed or None]
    streams = [_stream(read, part, sort, needed) for part in parts]
    try:
        heads = [await anext(stream, None) for stream in streams]
        ordered: Callable[[dict[str, Any]], Any] = functools.cmp_to_key(lambda a, b: _compare(a, b, sort))
        taken: list[dict[str, Any]] = []
        while not needed or len(taken) < needed:
            waiting = [(i, head) for i, head in enumerate(heads) if head is not None]
            if not waiting:
                break
            first, head = min(waiting, key=lambda pair: ordered(pair[1]))
            taken.append(head)
            heads[first] = await anext(streams[first], None)
        return taken[skip:]
    finally:
        for stream in streams:
            await stream.aclose()


async def _stream(read: Reader, part: Filter, sort: Sort, needed: int) -> AsyncGenerator[dict[str, Any], None]:
    """A part's records in `sort` (which ends with the id), a chunk at a time, each chunk the keyset
    page after the last record read."""
    after, sent, last = part.after, 0, None
    while True:
        size = min(CHUNK, needed - sent) if needed else CHUNK
        rows = await read(replace(part, after=after), sort, size)
        for row in rows:
            if (last is not None and _compare(last, row, sort) >= 0) or not _orderable(row, sort):
                raise OutOfOrder()
            last = row
            yield row
        sent += len(rows)
        if last is None or len(rows) < size or (needed and sent >= needed):
            return
        after = (tuple(sort), tuple(last.get(name) for name, _ in sort))


def by_keyset(sort: Sort) -> bool:
    """Whether a part can be read in chunks in `sort`: it ends with the id, so a position is exact."""
    return bool(sort) and sort[-1][0] == "id"


def _compare(a: dict[str, Any], b: dict[str, Any], sort: Sort) -> int:
    for name, direction in sort:
        left, right = _key(a.get(name)), _key(b.get(name))
        if left != right:
            return direction if left > right else -direction
    return 0


def _orderable(row: dict[str, Any], sort: Sort) -> bool:
    return all(_key(row.get(name)) is not None for name, _ in sort)


def _key(value: Any) -> tuple[int, Any]:
    """MongoDB's order of the types a sort meets here: null, numbers, text, booleans, dates."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (3, value)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, datetime):
        return (4, value)
    raise OutOfOrder()  # a list, a document: the merge does not order them (the portable query does)
