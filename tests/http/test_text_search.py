"""Ranked text search over HTTP and GraphQL: the demo's post titles are `searchable(text=True)`.

Where MongoDB's shapes are sent, `search=` is one `$text` and `sort=relevance` orders by its score,
then by id; the oracle is the same `$text` query sent straight to the server (the embedded server
ranks by scores of its own: tests/storage/test_text_search.py). The embedded profile keeps the
substring test and refuses `sort=relevance`.
"""
import pytest

from tests.graphql.test_endpoint import run
from tests.http.test_index_queries import POSTS, bad_request, ids, seed_posts, titles, url
from tests.servers import EMBEDDED_SHAPES

TITLES = ["Apple pie", "Apple apple tart", "Pear", "Applesauce", "Crumble with apple and apple and apple"]
mongodb_shapes = pytest.mark.skipif(EMBEDDED_SHAPES, reason="the embedded server's shapes are sent: substrings")


@pytest.mark.parametrize("params, name, message", [
    ({"sort": "relevance"}, "sort", "sort=relevance orders the records a search finds: send search= too."),
    ({"sort": "-relevance", "search": "apple"}, "sort",
     "sort=relevance orders the most relevant records first: it comes first, without a sign."),
    ({"sort": "title,relevance", "search": "apple"}, "sort",
     "sort=relevance orders the most relevant records first: it comes first, without a sign."),
    ({"sort": "relevance", "search": "apple", "cursor": ""}, "cursor",
     "sort=relevance pages by page=, not by cursor: a relevance is not a stored value."),
])
async def test_relevance_needs_a_search_comes_first_and_pages_by_number(api, db, params, name, message):
    await seed_posts(db, *TITLES)
    bad_request(await api.get(url(POSTS, **params)), message, {name: [message]})


async def test_relevance_is_not_a_sort_where_the_repository_has_no_text_field(api, db):
    message = "The field 'relevance' is not sortable; the sortable fields are: created_at, id, name, updated_at."
    bad_request(await api.get(url("/api/restify/tags", sort="relevance", search="x")), message, {"sort": [message]})


@pytest.mark.embedded_shapes("the embedded profile keeps the substring test and does not rank")
async def test_on_the_embedded_profile_search_tests_substrings_and_relevance_is_a_400(api, db, commands):
    await seed_posts(db, *TITLES)
    commands.reset()
    assert sorted(titles(await api.get(url(POSTS, search="apple")))) == sorted(TITLES[:2] + TITLES[3:])
    assert not any("$text" in str(command) for command in commands.sent)
    message = ("sort=relevance cannot order this search: the database does not rank text (the embedded server "
               "tests substrings); sort by a field instead.")
    bad_request(await api.get(url(POSTS, search="apple", sort="relevance")), message, {"sort": [message]})
    body = await run(api, '{ postList(search: "apple", sort: "relevance") { title } }')
    assert body["data"] is None and body["errors"][0]["message"] == message


async def _ranked_by_the_server(restify, db, words: str) -> list[str]:
    await restify.ready()  # the text index
    found = db.collection("posts")._col.find({"$text": {"$search": words}}).sort(
        [("score", {"$meta": "textScore"}), ("_id", 1)])
    return [str(d["_id"]) for d in await found.to_list(length=None)]


@mongodb_shapes
async def test_relevance_orders_a_text_search_by_the_servers_score_then_id(api, restify, db, commands):
    await restify.ready()
    await seed_posts(db, *TITLES, "Apple pie")
    expected = await _ranked_by_the_server(restify, db, "apple")
    commands.reset()
    first = await api.get(url(POSTS, search="apple", sort="relevance", perPage=2))
    second = await api.get(url(POSTS, search="apple", sort="relevance", perPage=2, page=2))
    assert ids(first) + ids(second) == expected[:4]
    meta = first.json["meta"]
    assert (meta["total"], meta["next_cursor"], meta["prev_cursor"]) == (len(expected), None, None)
    assert first.json["links"]["next"].endswith("page=2")
    finds = [command for command in commands.sent if "find" in command]
    assert finds[0]["filter"] == {"$text": {"$search": "apple"}}
    assert finds[0]["sort"] == {"relevance": {"$meta": "textScore"}, "_id": 1}


@mongodb_shapes
async def test_a_text_search_is_sent_as_text_in_lists_counts_and_aggregations(api, restify, db, commands):
    await restify.ready()
    await seed_posts(db, *TITLES)
    commands.reset()
    listed = await api.get(url(POSTS, search="pear", sort="-views"))
    assert titles(listed) == ["Pear"]
    grouped = await api.get(url(f"{POSTS}/aggregate", search="pear", group="published"))
    assert grouped.status == 200, grouped.body
    assert [row["count"] for row in grouped.json["data"]] == [1]
    reads = [command for command in commands.sent if "find" in command or "aggregate" in command]
    assert reads and all("$text" in str(command) for command in reads)
    body = await run(api, '{ postList(search: "apple", sort: "relevance") { id } }')
    assert [post["id"] for post in body["data"]["postList"]] == await _ranked_by_the_server(restify, db, "apple")
