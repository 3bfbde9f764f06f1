"""A count that fixes an indexed key beside other conditions (`count(..., indexed=key)`, a relation key
as the relation sort counts each parent's records): the same answer as any count on every server; on
the embedded server, read through the key's index when the key leaves few records (its count of such a
filter tests every document)."""
import pytest

from storage import Filter
from storage.collection import COUNT_THROUGH
from tests.servers import EMBEDDED_SHAPES

FEW, MANY = 3, COUNT_THROUGH + 1


@pytest.fixture
def rows(io_loop, db, commands):
    async def fill():
        rows = db.collection("rows")
        await rows.create_index((("owner", 1),))
        await rows.insert_many([{"owner": "few", "title": "apple" if n % 3 else "pear", "rank": n} for n in range(FEW)]
                               + [{"owner": "many", "title": "apple", "rank": n} for n in range(MANY)]
                               + [{"title": "apple", "rank": 0}])
    io_loop.run_sync(fill)
    commands.reset()
    return db.collection("rows")


def read(commands) -> list[str]:
    return [name for name, collection in commands.commands if collection == "rows"]


APPLE = {"search_fields": ("title",), "search_text": "apple"}


@pytest.mark.parametrize("where, expected, embedded", [
    (Filter(equals={"owner": "few"}, **APPLE), 2, ["aggregate", "find"]),
    (Filter(equals={"owner": "few"}, conditions=(("rank", "gt", 0),)), 2, ["aggregate", "find"]),
    (Filter(equals={"owner": "many"}, **APPLE), MANY, ["aggregate", "aggregate"]),  # too many to read the ids of
    (Filter(equals={"owner": "none"}, **APPLE), 0, ["aggregate"]),
    (Filter(equals={"owner": "few"}), FEW, ["aggregate"]),  # the key alone: counted from its index anyway
], ids=["few", "few-range", "many", "none", "key-alone"])
def test_a_count_through_an_indexed_key_answers_as_any_count(io_loop, rows, commands, where, expected, embedded):
    assert io_loop.run_sync(lambda: rows.count(where)) == expected
    commands.reset()
    assert io_loop.run_sync(lambda: rows.count(where, indexed="owner")) == expected
    assert read(commands) == (embedded if EMBEDDED_SHAPES else ["aggregate"])
