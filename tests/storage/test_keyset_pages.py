"""Keyset pages (cursor pages), on every filter shape, over the id order and over several sort keys.

On the embedded server, a page over the id order is read through its `_id` index with the find
command's `min` / `max` bounds (storage/id_pages.py) instead of a `$gt` on `_id`, and a page over
several keys as a few plain queries (storage/keyset_reads.py) instead of one `$or`: that server
evaluates both in Python over the documents. On MongoDB the one portable query is sent. The answers
must be the same pages.
"""
from dataclasses import replace

import pytest
from pymongo import monitoring

from storage import Filter, connect
from tests.conftest import DATABASE_TIMEOUT_MS
from tests.servers import EMBEDDED_SHAPES, PROFILE

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
    database = connect(mongodb_uri, db_name, listeners=[finds], profile=PROFILE, timeout_ms=DATABASE_TIMEOUT_MS)
    yield database.collection("rows")
    database.close()


async def walk(rows, where: Filter, direction: int = 1, size: int = 2, sort=None) -> list[str]:
    """Every page after the last record of the previous one, in `sort` (default: the id order in `direction`)."""
    sort = sort or [("id", direction)]
    walked, after = [], None
    while True:
        page = await rows.find(replace(where, after=after), sort=sort, limit=size)
        if not page:
            return walked
        walked += [d["name"] for d in page]
        after = (tuple(sort), tuple(page[-1]["id"] if name == "id" else page[-1].get(name) for name, _ in sort))


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


@pytest.mark.embedded_shapes("MongoDB reads $gt on _id from its index; the min/max bound is sent to the embedded "
                             "server only")
@pytest.mark.parametrize("direction, bound", [(1, "min"), (-1, "max")])
async def test_on_the_embedded_server_an_id_page_is_bounded_by_the_id_index(rows, finds, direction, bound):
    stored = [await rows.insert(row) for row in ROWS]
    finds.finds.clear()
    sort = [("id", direction)]
    await rows.find(Filter(after=(tuple(sort), (stored[4]["id"],))), sort=sort, limit=2)
    (command,) = finds.finds
    assert command[bound] == {"_id": stored[4]["id"]}
    assert "$gt" not in str(command["filter"]) and "$lt" not in str(command["filter"])


# -- several sort keys ----------------------------------------------------------------------------

RANKED = [{"name": f"k{n}", "group": "ab"[n % 2], "rank": rank}
          for n, rank in enumerate([3, 1, None, 2, 3, 1, 2, None, 3, 0, 2, 3])]
RANKED[4].pop("rank")  # missing sorts with null


async def everything(rows, where: Filter, sort) -> list[str]:
    return [d["name"] for d in await rows.find(where, sort=sort)]


@pytest.mark.parametrize("sort", [
    [("rank", 1), ("id", 1)], [("rank", -1), ("id", 1)], [("rank", -1), ("id", -1)],
    [("group", 1), ("rank", -1), ("id", 1)], [("group", -1), ("rank", 1), ("id", -1)],
], ids=["rank", "-rank", "-rank,-id", "group,-rank", "-group,rank,-id"])
@pytest.mark.parametrize("where", [
    Filter(), Filter(equals={"group": "a"}), Filter(equals={"rank": 3}), Filter(equals={"rank": None}),
    Filter(conditions=(("rank", "gte", 1),)), Filter(search_fields=("name",), search_text="K1"),
], ids=["all", "group", "rank=3", "rank=null", "rank>=1", "search"])
@pytest.mark.parametrize("size", [1, 3])
async def test_pages_over_several_keys_walk_every_matching_record_once_in_order(rows, sort, where, size):
    for row in RANKED:
        await rows.insert(row)
    expected = await everything(rows, where, sort)
    assert expected  # every filter here matches something
    assert await walk(rows, where, sort=sort, size=size) == expected


async def test_a_page_over_several_keys_after_a_deleted_record_starts_where_it_was(rows):
    stored = [await rows.insert(row) for row in RANKED]
    sort = [("rank", -1), ("id", 1)]
    order = await everything(rows, Filter(), sort)
    position = next(d for d in stored if d["name"] == order[3])
    await rows.delete(position["id"])
    page = await rows.find(Filter(after=(tuple(sort), (position["rank"], position["id"]))), sort=sort, limit=3)
    assert [d["name"] for d in page] == order[4:7]


@pytest.mark.embedded_shapes("MongoDB reads the $or keyset from its index in one query; the plain parts are sent "
                             "to the embedded server only")
async def test_on_the_embedded_server_a_page_over_several_keys_sends_no_or(rows, finds):
    stored = [await rows.insert(row) for row in RANKED]
    finds.finds.clear()
    sort = [("rank", -1), ("id", 1)]
    position = stored[3]  # rank 2
    page = await rows.find(Filter(after=(tuple(sort), (2, position["id"]))), sort=sort, limit=3)
    assert len(page) == 3
    assert finds.finds and all("$or" not in str(command["filter"]) for command in finds.finds)


@pytest.mark.skipif(EMBEDDED_SHAPES, reason="the embedded server's shapes are sent: bounds and plain parts")
async def test_where_mongodbs_shapes_are_sent_a_page_is_one_portable_find(rows, finds):
    stored = [await rows.insert(row) for row in RANKED]
    finds.finds.clear()
    by_id, by_rank = [("id", 1)], [("rank", -1), ("id", 1)]
    await rows.find(Filter(after=(tuple(by_id), (stored[3]["id"],))), sort=by_id, limit=3)
    await rows.find(Filter(after=(tuple(by_rank), (2, stored[3]["id"]))), sort=by_rank, limit=3)
    by_id_command, by_rank_command = finds.finds
    assert "$gt" in str(by_id_command["filter"]) and "min" not in by_id_command
    assert "$or" in str(by_rank_command["filter"])
