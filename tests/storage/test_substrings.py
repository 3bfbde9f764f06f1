"""A search text is the same literal, case-insensitive substring on every server.

MongoDB is sent the pattern `(?i)<escaped text>`; the embedded server, for a plain ASCII text without
`%` or `_`, its own substring test (`$contains`, SQL's LIKE), which it runs several times faster
(storage/filters.py, `substring_test`). The oracle is the pattern itself, sent to the same server.
"""
import pytest

from storage import Filter
from storage.filters import substring_test
from storage.ids import to_plain
from tests.servers import EMBEDDED_SHAPES

TITLES = ["Apple pie", "APPLE", "pineapple", "a_b", "aXb", "50% off", "500 off", "Crème brûlée", "CRÈME", "naïve",
          "back\\slash", "dot.com", "dotXcom", "(paren)", "", None, "Kelvin \u212a", "straße"]
TEXTS = ["apple", "APP", "a_b", "50%", "%", "_", "crème", "CRÈME", "è", "\\", "dot.com", ".", "(paren", "k", "ss",
         " ", "zzz", "pie"]


@pytest.fixture
def rows(io_loop, db, commands):
    async def fill():
        for n, title in enumerate(TITLES):
            await db.collection("rows").insert({"name": f"r{n}", **({} if title is None else {"title": title})})
    io_loop.run_sync(fill)
    commands.reset()
    return db.collection("rows")


async def by_pattern(rows, text: str) -> list[str]:
    cursor = rows._col.find(Filter(search_fields=("title",), search_text=text).to_mongo()).sort("_id", 1)
    return [to_plain(d)["name"] for d in await cursor.to_list(length=None)]


@pytest.mark.parametrize("text", TEXTS)
def test_a_search_finds_and_counts_what_the_pattern_finds(io_loop, rows, text):
    where = Filter(search_fields=("title",), search_text=text)
    expected = io_loop.run_sync(lambda: by_pattern(rows, text))
    found = io_loop.run_sync(lambda: rows.find(where, sort=[("id", 1)]))
    assert [d["name"] for d in found] == expected
    assert io_loop.run_sync(lambda: rows.count(where)) == len(expected)


def test_the_embedded_server_is_sent_its_substring_test_for_plain_ascii_only(io_loop, rows, commands):
    io_loop.run_sync(lambda: rows.count(Filter(search_fields=("title",), search_text="Apple")))
    io_loop.run_sync(lambda: rows.count(Filter(search_fields=("title",), search_text="crème")))
    sent = [str(command) for command in commands.sent if command.get("aggregate") == "rows"]
    assert len(sent) == 2
    assert ("$contains" in sent[0]) is EMBEDDED_SHAPES and "$regex" in sent[1]


def test_texts_the_substring_test_would_read_otherwise_keep_the_pattern():
    assert substring_test("Apple pie") == {"$contains": "Apple pie"}
    assert [substring_test(text) for text in ("50%", "a_b", "crème", "\u212a")] == [None] * 4


@pytest.mark.skipif(not EMBEDDED_SHAPES, reason="the embedded server's substring test is not sent")
def test_the_one_difference_the_embedded_substring_test_keeps(io_loop, rows):
    """A case-insensitive pattern takes the Kelvin sign for a k; SQL's LIKE does not."""
    io_loop.run_sync(lambda: rows.insert({"name": "kelvin", "title": "\u212a"}))
    assert io_loop.run_sync(lambda: by_pattern(rows, "k"))[-1] == "kelvin"
    found = io_loop.run_sync(lambda: rows.find(Filter(search_fields=("title",), search_text="k")))
    assert "kelvin" not in [d["name"] for d in found]
