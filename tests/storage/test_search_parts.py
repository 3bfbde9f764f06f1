"""A search through related ids (`search_within`): the same records and order on every server.

On the embedded server a search whose alternatives are a `$or` (own fields and related ids) is read
as disjoint plain parts, counted by adding their counts and paged by merging them in the sort, a
chunk of each part at a time (storage/search_parts.py); MongoDB gets the one portable `$or`. The
oracle is the portable query itself, sent to the same server.
"""
from dataclasses import replace

import pytest

from storage import Filter, grouped_counts, search_parts
from storage.ids import to_plain
from tests.servers import EMBEDDED_SHAPES

# `owner` is a belongs-to key; owners "o1" and "o3" are the related records whose names match.
ROWS = [{"name": f"r{n}", "title": ["apple", "pear", "grape", "plum"][n % 4], "rank": [2, None, 1, 3, 2][n % 5],
         "owner": [None, "o1", "o2", "o3", "o4"][n % 5] if n % 7 else "o9"} for n in range(23)]
ROWS[5].pop("owner")  # a record without the key at all
MATCHED = ("o1", "o3")


@pytest.fixture
def rows(io_loop, db, commands):
    async def fill():
        for row in ROWS:
            await db.collection("rows").insert(row)
    io_loop.run_sync(fill)
    commands.reset()
    return db.collection("rows")


def searching(text: str = "p", **changes) -> Filter:
    return replace(Filter(search_fields=("title",), search_text=text, search_within=(("owner", MATCHED),)), **changes)


async def portable(rows, where: Filter, sort, skip: int = 0, limit: int = 0) -> list[str]:
    """The answer of the one `$or` query, as MongoDB gets it."""
    query = where.to_mongo()
    if query is None:
        return []
    cursor = rows._col.find(query).sort([("_id" if n == "id" else n, d) for n, d in sort]).skip(skip)
    if limit:
        cursor = cursor.limit(limit)
    return [to_plain(d)["name"] for d in await cursor.to_list(length=None)]


async def names(rows, where: Filter, sort, skip: int = 0, limit: int = 0) -> list[str]:
    return [d["name"] for d in await rows.find(where, sort=sort, skip=skip, limit=limit)]


SORTS = [[("id", 1)], [("id", -1)], [("rank", 1), ("id", 1)], [("rank", -1), ("id", 1)],
         [("title", 1), ("rank", -1), ("id", -1)]]
FILTERS = {
    "own and related": searching(),
    "related only": searching(text="zz"),
    "with other filters": searching(conditions=(("rank", "gte", 2),), equals={"title": "pear"}),
    "two relations": searching(search_within=(("owner", MATCHED), ("title", ("grape",)))),
    "nothing related": searching(search_within=(("owner", ()),)),
}


@pytest.mark.parametrize("sort", SORTS, ids=lambda s: ",".join(f"{n}{d:+d}" for n, d in s))
@pytest.mark.parametrize("label", FILTERS)
@pytest.mark.parametrize("chunk", [2, 200])
async def test_pages_and_counts_are_the_portable_querys(rows, monkeypatch, sort, label, chunk):
    monkeypatch.setattr(search_parts, "CHUNK", chunk)
    where = FILTERS[label]
    everything = await portable(rows, where, sort)
    assert everything  # every case finds something
    assert await names(rows, where, sort) == everything
    assert await rows.count(where) == len(everything)
    for skip, limit in [(0, 1), (0, 5), (3, 4), (7, 3), (len(everything) - 1, 5), (len(everything), 2), (2, 0)]:
        assert await names(rows, where, sort, skip, limit) == everything[skip:skip + limit if limit else None]


@pytest.mark.parametrize("sort", [[("id", 1)], [("rank", -1), ("id", 1)]])
async def test_cursor_pages_walk_every_match_once(rows, monkeypatch, sort):
    monkeypatch.setattr(search_parts, "CHUNK", 2)
    where, walked, after = searching(), [], None
    while True:
        page = await rows.find(replace(where, after=after), sort=sort, limit=3)
        if not page:
            break
        walked += [d["name"] for d in page]
        after = (tuple(sort), tuple(page[-1].get(name) for name, _ in sort))
    assert walked == await portable(rows, where, sort)


@pytest.mark.parametrize("where, expected", [
    # the filter fixes the key to a matched related record: every record it admits matches the search
    (searching(equals={"owner": "o1"}), {"owner": "o1"}),
    (searching(conditions=(("owner", "in", ("o1", "o3")),)), {"owner": {"$in": ["o1", "o3"]}}),
    # ... to other records: only the own fields can match
    (searching(equals={"owner": "o2"}), {"owner": "o2", "title": {"$regex": "(?i)p"}}),
    (searching(conditions=(("owner", "nin", ("o1", "o2", "o3")),)),
     {"owner": {"$nin": ["o1", "o2", "o3"]}, "title": {"$regex": "(?i)p"}}),
    (searching(search_fields=(), equals={"owner": "o2"}), None),
    # a mixed list decides nothing
    (searching(conditions=(("owner", "in", ("o1", "o2")),)),
     {"$and": [{"$or": [{"title": {"$regex": "(?i)p"}}, {"owner": {"$in": ["o1", "o3"]}}]},
               {"owner": {"$in": ["o1", "o2"]}}]}),
])
async def test_a_filter_that_fixes_the_key_decides_its_alternative(rows, where, expected):
    assert where.to_mongo() == expected
    found = await names(rows, where, [("id", 1)])
    assert found == [r["name"] for r in ROWS if _matches(r, where)]
    assert await rows.count(where) == len(found)


def _matches(row: dict, where: Filter) -> bool:
    """The filter in Python, for the few shapes above."""
    if any(row.get(name) != value for name, value in where.equals.items()):
        return False
    for name, operation, values in where.conditions:
        if operation == "in" and row.get(name) not in values:
            return False
        if operation == "nin" and row.get(name) in values:
            return False
    text = where.search_text.lower()
    return any(text in str(row.get(name, "")).lower() for name in where.search_fields) or \
        any(row.get(name) in ids for name, ids in where.search_within)


@pytest.mark.embedded_shapes("MongoDB reads the $or from its indexes in one query; the plain parts are sent to the "
                             "embedded server only")
async def test_on_the_embedded_server_no_command_carries_a_or_or_reads_more_than_a_chunk(rows, commands, monkeypatch):
    monkeypatch.setattr(search_parts, "CHUNK", 3)
    where = searching()
    await rows.find(where, sort=[("rank", -1), ("id", 1)], skip=4, limit=5)
    await rows.count(where)
    reads = [command for command in commands.sent if "find" in command or "aggregate" in command]
    assert reads and not any("$or" in str(command) for command in reads)
    assert all(0 < command.get("limit", 0) <= 3 for command in reads if "find" in command)


async def test_a_sort_on_values_the_merge_does_not_order_reads_the_portable_query(rows):
    await rows.insert({"name": "listed", "title": "apple", "rank": [1, 2]})
    where, sort = searching(), [("rank", 1), ("id", 1)]
    assert await names(rows, where, sort) == await portable(rows, where, sort)


@pytest.mark.skipif(EMBEDDED_SHAPES, reason="the embedded server's shapes are sent: plain parts")
async def test_where_mongodbs_shapes_are_sent_a_search_is_one_portable_or(rows, commands):
    where = searching()
    await rows.find(where, sort=[("rank", -1), ("id", 1)], skip=4, limit=5)
    await rows.count(where)
    reads = [command for command in commands.sent if "find" in command or "aggregate" in command]
    assert len(reads) == 2 and all("$or" in str(command) for command in reads)


# -- the parts counted by groups of the key they keep in or leave out (storage/grouped_counts.py) ----------

def _count_commands(commands) -> list[dict]:
    return [command for command in commands.sent if "aggregate" in command or "count" in command]


@pytest.mark.embedded_shapes("the plain parts, and so their counts by groups, are sent to the embedded server only")
async def test_both_parts_are_counted_by_groups_of_the_key_without_a_set_test(rows, commands):
    where = searching(conditions=(("rank", "gte", 1),))
    commands.reset()
    assert await rows.count(where) == len(await portable(rows, where, [("id", 1)]))
    sent = _count_commands(commands)
    assert len(sent) == 2 and not any("$nin" in str(command) or "$in" in str(command) for command in sent)
    by_owner = {"$group": {"_id": "$owner", "n": {"$sum": 1}}}
    assert [command["pipeline"] for command in sent] == [
        [{"$match": {"rank": {"$gte": 1}}}, by_owner, {"$limit": grouped_counts.GROUPS + 1}],
        [{"$match": {"rank": {"$gte": 1}, "title": {"$contains": "p"}}}, by_owner,
         {"$limit": grouped_counts.GROUPS + 1}]]


@pytest.mark.embedded_shapes("the plain parts, and so their counts by groups, are sent to the embedded server only")
async def test_a_related_part_alone_is_grouped_over_the_whole_collection(rows, commands):
    where = searching(text="zz")
    commands.reset()
    assert await rows.count(where) == len(await portable(rows, where, [("id", 1)])) == 8
    assert [command["pipeline"][0] for command in _count_commands(commands)] == [
        {"$group": {"_id": "$owner", "n": {"$sum": 1}}}, {"$match": {"title": {"$contains": "zz"}}}]


@pytest.mark.parametrize("odd", [["o1", "o5"], ["o5"], [], 7, {"id": "o2"}], ids=repr)
async def test_a_key_that_is_not_a_plain_value_is_counted_as_it_is(rows, odd):
    await rows.insert({"name": "odd", "title": "apple", "rank": 2, "owner": odd})
    where = searching()
    assert await rows.count(where) == len(await portable(rows, where, [("id", 1)]))


async def test_past_its_groups_a_part_is_counted_as_it_is(rows, monkeypatch):
    monkeypatch.setattr(grouped_counts, "GROUPS", 2)  # the rows' owners make five groups
    where = searching()
    assert await rows.count(where) == len(await portable(rows, where, [("id", 1)]))


def test_which_parts_are_counted_by_groups():
    own = searching(search_within=(), conditions=(("owner", "nin", ("o1", "o3")),))
    assert grouped_counts.key_groups_of(own) == grouped_counts.KeyGroups(
        searching(search_within=()), "owner", ["o1", "o3"], inside=False)
    related = Filter(conditions=(("rank", "gte", 1), ("owner", "in", ("o1",))))
    assert grouped_counts.key_groups_of(related) == grouped_counts.KeyGroups(
        Filter(conditions=(("rank", "gte", 1),)), "owner", ["o1"], inside=True)
    two = replace(own, conditions=(*own.conditions, ("title", "nin", ("x",))))
    assert grouped_counts.key_groups_of(two) is None  # one key left out, not two
    by_id = replace(own, conditions=(("id", "nin", ("6b0a2c44bddfeff4ce5b825e",)),))
    assert grouped_counts.key_groups_of(by_id) is None
    numbers = replace(own, conditions=(("rank", "in", (1, 2)),))
    assert grouped_counts.key_groups_of(numbers) is None  # True == 1 in Python, not in MongoDB
    rows = [{"_id": "o1", "n": 3}, {"_id": "o2", "n": 4}, {"_id": None, "n": 5}]
    outside = grouped_counts.KeyGroups(Filter(), "owner", ["o1", "o3"], inside=False)
    assert grouped_counts.count_groups(rows, outside) == 9
    assert grouped_counts.count_groups(rows, replace(outside, inside=True)) == 3  # null is in no list
    assert grouped_counts.count_groups([*rows, {"_id": ["o2"], "n": 1}], outside) is None
    assert grouped_counts.count_groups([*rows, {"_id": '["o2"]', "n": 1}], outside) is None  # as the embedded server
