"""`find(..., fields=...)`: only those fields, the id and the sort's keys, on every path a find takes
(a plain query, a keyset page, a search read in parts on the embedded server)."""
import pytest

from storage import Filter
from tests.servers import EMBEDDED_SHAPES


@pytest.fixture
def rows(io_loop, db, commands):
    async def fill():
        for n in range(6):
            await db.collection("rows").insert({"title": f"apple {n}", "rank": n % 3, "owner": f"o{n % 2}",
                                                "body": "x" * 100})
    io_loop.run_sync(fill)
    commands.reset()
    return db.collection("rows")


def keys(documents: list[dict]) -> set[frozenset[str]]:
    return {frozenset(document) for document in documents}


def test_a_plain_find_reads_only_the_fields_named_and_the_sort(io_loop, rows):
    found = io_loop.run_sync(lambda: rows.find(Filter(), sort=[("rank", 1), ("id", 1)], limit=4, fields=("owner",)))
    assert len(found) == 4 and keys(found) == {frozenset({"id", "owner", "rank"})}


def test_a_keyset_page_reads_only_the_fields_named(io_loop, rows):
    first = io_loop.run_sync(lambda: rows.find(Filter(), sort=[("id", 1)], limit=2))
    after = Filter(after=((("id", 1),), (first[-1]["id"],)))
    found = io_loop.run_sync(lambda: rows.find(after, sort=[("id", 1)], limit=2, fields=("owner",)))
    assert [d["id"] for d in found] != [d["id"] for d in first] and keys(found) == {frozenset({"id", "owner"})}


def test_a_search_through_related_ids_reads_only_the_fields_named(io_loop, rows):
    where = Filter(search_fields=("title",), search_text="apple", search_within=(("owner", ("o1",)),))
    found = io_loop.run_sync(lambda: rows.find(where, sort=[("rank", -1), ("id", 1)], fields=("owner",)))
    assert len(found) == 6 and keys(found) == {frozenset({"id", "owner", "rank"})}


@pytest.mark.parametrize("where, skip, limit", [
    (Filter(), 0, 0), (Filter(equals={"owner": "o1"}), 1, 2), (Filter(), 2, 3),
])
def test_a_read_of_a_few_fields_in_id_order_answers_as_a_whole_read_does(io_loop, rows, commands, where, skip,
                                                                          limit):
    whole = io_loop.run_sync(lambda: rows.find(where, sort=[("id", 1)], skip=skip, limit=limit))
    commands.reset()
    found = io_loop.run_sync(lambda: rows.find(where, sort=[("id", 1)], skip=skip, limit=limit,
                                               fields=("owner", "rank")))
    assert found == [{"id": d["id"], "owner": d["owner"], "rank": d["rank"]} for d in whole] and found
    # The embedded server applies a find's projection to each document it loads whole, and reads an
    # aggregate's $project in SQL; MongoDB reads both alike.
    sent = [c for c in commands.sent if c.get("find") == "rows" or c.get("aggregate") == "rows"]
    assert [("aggregate" if "aggregate" in c else "find") for c in sent] == ["aggregate" if EMBEDDED_SHAPES else "find"]
    if EMBEDDED_SHAPES:
        assert sent[0]["pipeline"][-1] == {"$project": {"owner": 1, "rank": 1}}


def test_a_read_of_an_id_among_others_finds_it_by_its_id(io_loop, rows):
    some = io_loop.run_sync(lambda: rows.find(Filter(), sort=[("id", 1)], limit=3))
    where = Filter(equals={"id": some[1]["id"]})
    found = io_loop.run_sync(lambda: rows.find(where, sort=[("id", 1)], limit=2, fields=("owner",)))
    assert found == [{"id": some[1]["id"], "owner": some[1]["owner"]}]
