"""Keyset pages over the id order (cursor pages with the default sort), on every filter shape.

On the embedded server they are read through its `_id` index with the find command's `min` / `max`
bounds (storage/id_pages.py) instead of a `$gt` on `_id`, which that server evaluates in Python over
every document; on MongoDB the plain `$gt` / `$lt` is sent. The answers must be the same pages.
"""
import os

import pytest
from pymongo import monitoring

from storage import Filter, connect

EMBEDDED = not os.environ.get("MONGODB_URI")
ROWS = [{"name": f"r{n}", "group": "ab"[n % 2], "at": f"2024-01-{n + 1:02d}T12:00:00.000Z"} for n in range(9)]


class FindCommands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.finds: list[dict] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "find":
            self.finds.append(dict(event.command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture
def finds():
    return FindCommands()


@pytest.fixture
def rows(io_loop, mongodb_uri, db_name, finds):
    database = connect(mongodb_uri, db_name, listeners=[finds])
    yield database.collection("rows")
    database.close()


async def walk(rows, where: Filter, direction: int, size: int = 2) -> list[str]:
    """Every page after the last record of the previous one, in `direction` of the id order."""
    sort = [("id", direction)]
    walked, after = [], None
    while True:
        page = await rows.find(Filter(**{**where.__dict__, "after": after}), sort=sort, limit=size)
        if not page:
            return walked
        walked += [d["name"] for d in page]
        after = (tuple(sort), (page[-1]["id"],))


@pytest.mark.parametrize("where, expected", [
    (Filter(), [r["name"] for r in ROWS]),
    (Filter(equals={"group": "a"}), ["r0", "r2", "r4", "r6", "r8"]),
    # A search is a $regex inside $or: the embedded server filters it in Python, the bound still holds.
    (Filter(search_fields=("name",), search_text="R1"), ["r1"]),
    (Filter(conditions=(("group", "in", ("b",)),), search_fields=("group",), search_text="B"), ["r1", "r3", "r5", "r7"]),
    # A date-like value sends the embedded server down a path that ignores min/max: still the right pages.
    (Filter(conditions=(("at", "gte", "2024-01-04"),)), ["r3", "r4", "r5", "r6", "r7", "r8"]),
], ids=["all", "equals", "search", "search-and-in", "date-strings"])
@pytest.mark.parametrize("direction", [1, -1])
async def test_id_pages_walk_every_matching_record_once_in_order(rows, where, expected, direction):
    for row in ROWS:
        await rows.insert(row)
    assert await walk(rows, where, direction) == (expected if direction == 1 else expected[::-1])


@pytest.mark.parametrize("direction, expected", [(1, ["r5", "r6"]), (-1, ["r3", "r2"])])
async def test_a_page_after_a_deleted_record_starts_where_it_was(rows, direction, expected):
    stored = [await rows.insert(row) for row in ROWS]
    position = stored[4]["id"]
    await rows.delete(position)
    sort = [("id", direction)]
    page = await rows.find(Filter(after=(tuple(sort), (position,))), sort=sort, limit=2)
    assert [d["name"] for d in page] == expected


async def test_a_malformed_position_matches_nothing(rows):
    for row in ROWS[:3]:
        await rows.insert(row)
    assert await rows.find(Filter(after=((("id", 1),), ("not-an-id",))), sort=[("id", 1)], limit=2) == []


@pytest.mark.skipif(not EMBEDDED, reason="MongoDB reads $gt on _id from its index; the bound is embedded-only")
@pytest.mark.parametrize("direction, bound", [(1, "min"), (-1, "max")])
async def test_on_the_embedded_server_an_id_page_is_bounded_by_the_id_index(rows, finds, direction, bound):
    stored = [await rows.insert(row) for row in ROWS]
    finds.finds.clear()
    sort = [("id", direction)]
    await rows.find(Filter(after=(tuple(sort), (stored[4]["id"],))), sort=sort, limit=2)
    (command,) = finds.finds
    assert command[bound] == {"_id": stored[4]["id"]}
    assert "$gt" not in str(command["filter"]) and "$lt" not in str(command["filter"])
