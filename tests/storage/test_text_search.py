"""Text search: what the embedded server does with a text index, `$text` and `{"$meta": "textScore"}`,
and which search each profile sends.

MongoDB (its manual): a text index is listed by `listIndexes` (keys `_fts`/`_ftsx`, its fields as
`weights`), one per collection; `$text` without one is an error; `$search` is any of its words,
stemmed, `-word` excludes; `$text` sits in a `$or` only when every other branch is indexed; a sort or
projection by `textScore` without `$text` is an error. The embedded nx-27017 server accepts all of it
but differs, as pinned below, so the `embedded` profile keeps the substring test for `search=` and
does not rank; the `mongodb` profile sends `$text` (and CI runs that profile against the embedded
server, which is why a `$text` it answers must stay a valid shape there too).
"""
import pytest
from pymongo import TEXT
from pymongo.errors import OperationFailure

from storage import RELEVANCE, Filter
from tests.servers import EMBEDDED_SERVER, EMBEDDED_SHAPES

POSTS = [
    {"n": 1, "title": "Apple pie recipe", "body": "bake the apple slowly"},
    {"n": 2, "title": "Pear tart", "body": "an apple is not a pear"},
    {"n": 3, "title": "Running shoes", "body": "runners run"},
    {"n": 4, "title": "Apples and apples", "body": "apple apple apple"},
    {"n": 5, "title": "Plum", "body": "applesauce"},
]
on_the_embedded_server = pytest.mark.skipif(not EMBEDDED_SERVER, reason="pins the embedded server's own answers")


@pytest.fixture
def indexed(io_loop, posts):
    io_loop.run_sync(lambda: posts._col.create_index([("title", TEXT), ("body", TEXT)]))
    return posts


@pytest.fixture
def posts(io_loop, db, commands):
    collection = db.collection("posts")

    async def fill():
        await collection.insert_many(POSTS)
    io_loop.run_sync(fill)
    commands.reset()
    return collection


async def found(posts, query, sort=None, **options):
    cursor = posts._col.find(query, **options)
    if sort:
        cursor = cursor.sort(sort)
    return [d["n"] for d in await cursor.to_list(length=None)]


def text(words: str) -> dict:
    return {"$text": {"$search": words}}


SCORE = [("score", {"$meta": "textScore"}), ("_id", 1)]


# -- the embedded server's own answers ------------------------------------------------------

@on_the_embedded_server
async def test_embedded_server_runs_text_without_any_text_index_as_a_substring_test(posts):
    # MongoDB: "text index required". The embedded server tests substrings then (applesauce too).
    assert await found(posts, text("apple"), [("n", 1)]) == [1, 2, 4, 5]


@on_the_embedded_server
async def test_embedded_server_makes_a_text_index_once_and_lists_it_only_as_search_indexes(posts):
    assert await posts._col.create_index([("title", TEXT), ("body", TEXT)]) == "title_text_body_text"
    assert [d["name"] for d in await posts._col.list_indexes().to_list(length=None)] == ["_id_"]
    listed = await posts._col.database.command({"listSearchIndexes": "posts"})
    assert [d["key"] for d in listed["cursor"]["firstBatch"]] == [{"title": "text"}, {"body": "text"}]
    assert [index.keys for index in await posts.indexes() if index.name == "text"] in (
        [(("body", "text"), ("title", "text"))], [])  # [] where MongoDB's shapes are sent: no search indexes read
    with pytest.raises(OperationFailure, match="constraint failed"):  # MongoDB: the same index again is no change
        await posts._col.create_index([("title", TEXT), ("body", TEXT)])


@on_the_embedded_server
@pytest.mark.parametrize("words, expected", [
    ("APPLE", [1, 2, 4]),   # whole words, in any case
    ("apples", [4]),        # no stemming (MongoDB: apple and apples are one word: 1, 2, 4)
    ("app", []),            # no substrings
    ("pear shoes", []),     # every word (MongoDB: any word: 2, 3)
    ("apple -pear", [2]),   # no negation: both words (MongoDB: 1, 4)
    ('"apple pie"', [1]),   # a phrase
    ("a*b OR (x", []),      # query syntax is read as words
])
async def test_embedded_server_matches_whole_words_differently_from_mongodb(indexed, words, expected):
    assert await found(indexed, text(words), [("n", 1)]) == expected


@on_the_embedded_server
async def test_embedded_server_ranks_by_its_own_score(indexed):
    posts = indexed
    ranked = await posts._col.find(text("apple"), {"n": 1, "score": {"$meta": "textScore"}}).sort(SCORE).to_list(None)
    assert [d["n"] for d in ranked] == [1, 4, 2]  # most relevant first, by scores of its own
    assert all(isinstance(d["score"], float) for d in ranked)
    assert await found(posts, text("apple"), SCORE, skip=1, limit=1) == [4]
    # MongoDB refuses a textScore sort without $text; the embedded server ignores it.
    assert sorted(await found(posts, {}, SCORE)) == [1, 2, 3, 4, 5]


@on_the_embedded_server
async def test_embedded_server_combines_text_with_other_conditions_but_not_with_ids(indexed):
    posts = indexed
    assert await found(posts, {**text("apple"), "n": {"$gte": 2}}, [("n", 1)]) == [2, 4]
    assert await found(posts, {**text("apple"), "title": {"$regex": "(?i)pie"}}) == [1]
    # Inside $and the words are a substring test again, off the index (applesauce).
    assert await found(posts, {"$and": [text("apple"), {"n": {"$gte": 2}}]}, [("n", 1)]) == [2, 4, 5]
    assert await found(posts, {"$or": [text("pear"), {"n": 5}]}, [("n", 1)]) == [2, 5]
    one = (await posts._col.find_one({"n": 1}))["_id"]
    with pytest.raises(OperationFailure, match="no such column"):
        await found(posts, {**text("apple"), "_id": {"$in": [one]}})


@on_the_embedded_server
async def test_embedded_server_counts_text_matches_and_leaks_its_score_from_a_ranked_pipeline(indexed):
    posts = indexed
    counted = await posts._col.aggregate([{"$match": text("apple")}, {"$count": "n"}]).to_list(None)
    assert counted == [{"n": 3}]
    ranked = await posts._col.aggregate([{"$match": text("apple")}, {"$sort": {"s": {"$meta": "textScore"}}},
                                         {"$project": {"_id": 0, "n": 1, "_textScore": 1}}]).to_list(None)
    assert all("_textScore" in d for d in ranked)  # a field MongoDB never writes into a document


# -- which search each profile sends ---------------------------------------------------------

SEARCH = Filter(search_fields=("title", "body"), search_text="apple", text_fields=("body", "title"))


@pytest.mark.embedded_shapes("the embedded profile keeps the substring test: its $text differs from MongoDB's")
async def test_the_embedded_profile_searches_substrings_and_does_not_rank(posts, commands):
    assert sorted(d["n"] for d in await posts.find(SEARCH)) == [1, 2, 4, 5]  # applesauce too
    assert await posts.count(SEARCH) == 4
    assert not any("$text" in str(command) for command in commands.sent)
    assert not await posts.ranks(SEARCH)


@pytest.mark.skipif(EMBEDDED_SHAPES, reason="the embedded server's shapes are sent: the substring test")
async def test_the_mongodb_profile_sends_text_and_ranks(indexed, commands):
    posts = indexed
    where = Filter(search_fields=("title", "body"), search_text="apple", text_fields=("body", "title"),
                   conditions=(("n", "gte", 2),))
    assert where.to_mongo(text=True) == {"$text": {"$search": "apple"}, "n": {"$gte": 2}}
    assert await posts.ranks(where)
    page = await posts.find(where, sort=[(RELEVANCE, -1), ("id", 1)], limit=10)
    assert sorted(d["n"] for d in page) == [2, 4]
    assert "relevance" not in page[0]  # the score sorts; it is not answered
    assert await posts.count(where) == 2
    sent = [command for command in commands.sent if "find" in command]
    assert sent[0]["sort"] == {"relevance": {"$meta": "textScore"}, "_id": 1}


def test_a_text_search_is_one_or_with_related_ids_and_keeps_patterns_off_the_text_fields():
    where = Filter(search_fields=("title",), search_text="a.b", text_fields=("title",),
                   search_within=(("user_id", ("u1",)),))
    assert where.to_mongo(text=True) == {"$and": [{"$or": [{"$text": {"$search": "a.b"}}, {"user_id": {"$in": ["u1"]}}]}]}
    assert where.to_mongo() == {"$and": [{"$or": [{"title": {"$regex": "(?i)a\\.b"}}, {"user_id": {"$in": ["u1"]}}]}]}


def test_a_search_that_misses_a_text_field_is_not_a_text_search():
    hidden = Filter(search_fields=("title",), search_text="apple", text_fields=("body", "title"))
    assert not hidden.by_text()
    assert hidden.to_mongo(text=True) == {"title": {"$regex": "(?i)apple"}}
