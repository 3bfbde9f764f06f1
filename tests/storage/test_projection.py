"""`find(..., fields=...)`: only those fields, the id and the sort's keys, on every path a find takes
(a plain query, a keyset page, a search read in parts on the embedded server)."""
import pytest

from storage import Filter


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
