"""Counts kept for the filters a caller asks to keep (storage/counts.py): reused while this process writes
nothing to the collection and for at most the seconds given; any write to it, or the end of a
transaction, makes them stale."""
import asyncio

import pytest

from storage import Filter, counts

SEARCH = Filter(search_fields=("title",), search_text="apple")


@pytest.fixture
def rows(io_loop, db, commands):
    async def fill():
        for title in ("apple", "Apple pie", "pear"):
            await db.collection("rows").insert({"title": title})
    io_loop.run_sync(fill)
    commands.reset()
    return db.collection("rows")


def counted(io_loop, rows, commands, keep_for: float = 5.0, where: Filter = SEARCH) -> tuple[int, int]:
    """(the count, the commands it sent)."""
    commands.reset()
    return io_loop.run_sync(lambda: rows.count(where, keep_for)), len(commands.reads())


def test_a_kept_count_is_reused_until_a_write_to_its_collection(io_loop, db, rows, commands):
    assert counted(io_loop, rows, commands)[1] == 1
    assert counted(io_loop, rows, commands) == (2, 0)
    assert counted(io_loop, rows, commands, where=Filter(search_fields=("title",), search_text="pear")) == (1, 1)
    io_loop.run_sync(lambda: db.collection("others").insert({"title": "apple"}))
    assert counted(io_loop, rows, commands) == (2, 0)  # another collection's write changes nothing here
    io_loop.run_sync(lambda: rows.insert({"title": "apple tart"}))
    assert counted(io_loop, rows, commands) == (3, 1)
    stored = io_loop.run_sync(lambda: rows.find(Filter(equals={"title": "apple tart"})))[0]
    io_loop.run_sync(lambda: rows.delete(stored["id"]))
    assert counted(io_loop, rows, commands) == (2, 1)


def test_a_count_asked_without_keeping_is_always_counted(io_loop, rows, commands):
    assert counted(io_loop, rows, commands) == (2, 1)
    assert counted(io_loop, rows, commands, keep_for=0) == (2, 1)


def test_a_kept_count_expires(io_loop, rows, commands):
    assert counted(io_loop, rows, commands, keep_for=0.001) == (2, 1)
    io_loop.run_sync(lambda: asyncio.sleep(0.01))
    assert counted(io_loop, rows, commands, keep_for=0.001) == (2, 1)


def test_the_end_of_a_transaction_makes_kept_counts_stale(io_loop, rows, commands):
    assert counted(io_loop, rows, commands)[1] == 1
    counts.transaction_ended()  # what Database.in_transaction does when its work is committed or aborted
    assert counted(io_loop, rows, commands) == (2, 1)


def test_a_write_that_ended_while_counting_leaves_the_count_stale(io_loop, rows, commands):
    """The generation is read before counting: a write done meanwhile is not hidden by the count it raced."""
    before = counts.generation(rows._col)
    counts.keep(rows._col, repr(SEARCH), before, 99, 5.0)
    assert counted(io_loop, rows, commands) == (99, 0)
    io_loop.run_sync(lambda: rows.insert({"title": "apple crumble"}))
    counts.keep(rows._col, repr(SEARCH), before, 99, 5.0)  # a count begun before that insert, kept after it
    assert counted(io_loop, rows, commands) == (3, 1)


def estimated(io_loop, rows, commands, estimate_for: float = 5.0, where: Filter = Filter()) -> tuple[int, int]:
    """(the count of `where` with estimates kept `estimate_for` seconds, the commands it sent)."""
    commands.reset()
    return io_loop.run_sync(lambda: rows.count(where, estimate_for=estimate_for)), len(commands.reads())


def test_the_estimated_count_of_every_record_is_kept_until_a_write_from_this_process(io_loop, rows, commands):
    assert estimated(io_loop, rows, commands) == (3, 1)
    io_loop.run_sync(lambda: rows._col.insert_one({"title": "quince"}))  # another program's write: not seen yet
    assert estimated(io_loop, rows, commands) == (3, 0)
    io_loop.run_sync(lambda: rows.insert({"title": "plum"}))
    assert estimated(io_loop, rows, commands) == (5, 1)


def test_the_estimated_count_expires_and_zero_seconds_keep_none(io_loop, rows, commands):
    assert estimated(io_loop, rows, commands, estimate_for=0.001) == (3, 1)
    io_loop.run_sync(lambda: rows._col.insert_one({"title": "quince"}))
    io_loop.run_sync(lambda: asyncio.sleep(0.01))
    assert estimated(io_loop, rows, commands, estimate_for=0.001) == (4, 1)
    assert estimated(io_loop, rows, commands, estimate_for=0) == (4, 1)
    assert estimated(io_loop, rows, commands, estimate_for=0) == (4, 1)


def test_a_count_with_a_filter_is_not_kept_as_an_estimate(io_loop, rows, commands):
    pear = Filter(equals={"title": "pear"})
    assert estimated(io_loop, rows, commands, where=pear) == (1, 1)
    io_loop.run_sync(lambda: rows._col.insert_one({"title": "pear"}))
    assert estimated(io_loop, rows, commands, where=pear) == (2, 1)
