"""A keyset page over several sort keys, read as a few plain queries instead of one `$or`.

Records after a position (va, vb, id) in the sort (a, b, id) are the union of disjoint parts, which
follow each other in the sort order deepest first:

    a = va and b = vb and id beyond vid     (sorted by id alone: the rest is equal)
    a = va and b beyond vb                  (sorted by b, id)
    a beyond va                             (sorted by a, b, id)

where "beyond" is `$gt` ascending and, descending, `$lt` followed by the nulls (null or missing
values sort last there; ascending they sort first, so `$gt` past a null is "present"). Reading
the parts in that order, each up to what the page still needs, gives exactly the page.

The embedded server runs any `$or` in Python over the documents in sort order (a second at
100,000 documents, deep in a walk), while each part is a plain document it runs in SQL on its
indexes, and the last part is an id page (storage/id_pages.py). MongoDB answers the `$or` from its
index in one query: this is used on the embedded server only (`IndexSupport.id_ranges_indexed`).
"""
from dataclasses import replace
from typing import Any

from storage.filters import Condition, Filter

Sort = list[tuple[str, int]]


def _beyond(name: str, direction: int, value: Any) -> list[Condition]:
    """The conditions (read one after the other) of records past `value` of `name` in `direction`."""
    if value is None:
        return [(name, "null", False)] if direction == 1 else []  # nothing sorts after null descending
    if direction == 1:
        return [(name, "gt", value)]
    return [(name, "lt", value), (name, "null", True)]


def keyset_reads(where: Filter) -> list[tuple[Filter, Sort]] | None:
    """The (filter, sort) reads whose answers, concatenated, are the page after `where.after`; None
    for a keyset over the id alone (an id page already) or when there is none."""
    if where.after is None or len(where.after[0]) < 2:
        return None
    keys, values = where.after
    base = replace(where, after=None)
    reads: list[tuple[Filter, Sort]] = []
    for depth in reversed(range(len(keys))):
        equal = dict(zip((name for name, _ in keys[:depth]), values[:depth], strict=True))
        if any(name in base.equals and base.equals[name] != value for name, value in equal.items()):
            continue  # the part asks for another value than the filter does: it holds nothing
        fixed = replace(base, equals={**base.equals, **equal})
        name, direction = keys[depth]
        rest = list(keys[depth:])
        if name == "id" and depth == len(keys) - 1:
            reads.append((replace(fixed, after=((("id", direction),), (values[depth],))), [("id", direction)]))
            continue
        for condition in _beyond(name, direction, values[depth]):
            reads.append((replace(fixed, conditions=(*fixed.conditions, condition)), rest))
    return reads
