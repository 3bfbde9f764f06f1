"""The answer's byte budget over GraphQL (`server.max_response_bytes`): what a query writes is counted
while it runs (the records it selects fields of, each related record once per place a relation field
writes it, aliases included), and an answer over it is one `RESPONSE_TOO_LARGE` error, no data. The cost
counts relation lists given no cap at the default `first`.
"""
import json
from urllib.parse import quote

import pytest

from tests.graphql.test_endpoint import app, limits, refused, run  # noqa: F401 (app: a fixture)
from tests.http.test_index_queries import seed, seed_post

LIMIT = 200_000
TOO_LARGE = {"data": None, "errors": [{
    "message": f"The answer would be larger than {LIMIT} bytes (server.max_response_bytes); ask for fewer related "
               "records, fewer fields (fields=) or a smaller perPage.",
    "extensions": {"code": "RESPONSE_TOO_LARGE"}}]}


@pytest.fixture
def config(config, request):
    return {**config, "server": {"max_response_bytes": LIMIT}, **getattr(request, "param", {})}


async def posts_of(db, user_id: str, count: int, body: str = "x" * 10_000) -> None:
    for n in range(count):
        await seed_post(db, f"Post {n}", body=body, user_id=user_id)


async def test_a_list_writing_its_authors_posts_under_every_post_is_refused(api, db, ann):
    await posts_of(db, ann["id"], 8)
    # 8 posts, each with its author's 8 posts of 10 KB: 720 KB written from 160 KB loaded.
    query = "{ postList(first: 100) { body user { posts { body } } } }"
    assert await run(api, query, token=ann["token"]) == TOO_LARGE


@pytest.mark.parametrize("aliases, allowed", [("a b", True), ("a b c", False)])
async def test_aliases_that_write_a_relation_again_are_counted(api, db, ann, aliases, allowed):
    await posts_of(db, ann["id"], 8)
    selections = " ".join(f"{alias}: posts {{ body }}" for alias in aliases.split())
    body = await run(api, f"{{ postList(first: 1) {{ user {{ {selections} }} }} }}", token=ann["token"])
    if allowed:  # the post (10 KB), its author's 8 posts (80 KB) loaded once, written twice
        assert [len(body["data"]["postList"][0]["user"][alias]) for alias in aliases.split()] == [8, 8]
    else:
        assert body == TOO_LARGE


async def test_only_the_fields_a_query_selects_are_counted(api, db, ann):
    await posts_of(db, ann["id"], 8)
    body = await run(api, "{ postList(first: 100) { id user { posts { title } } } }", token=ann["token"])
    assert [len(post["user"]["posts"]) for post in body["data"]["postList"]] == [8] * 8


async def test_an_uncapped_relation_list_is_stopped_by_the_budget(api, db, ann):
    await posts_of(db, ann["id"], 25)
    query = "{ postList(first: 1) { user { posts(first: -1) { body } } } }"
    assert await run(api, query, token=ann["token"]) == TOO_LARGE


async def test_an_answer_within_the_budget_is_the_same_as_without_one(api, db, restify, ann):
    await posts_of(db, ann["id"], 8)
    await seed(db, "comments", body="Nice", post_id=await seed_post(db, "Mine", user_id=ann["id"]), user_id=ann["id"])
    query = ("{ postList(first: 20, sort: \"title\") { id title body views user { name posts(first: 2) { title } } "
             "comments { body user { name } } } me { name posts(first: 3) { title } } }")
    within = await run(api, query, token=ann["token"])
    restify.settings.set("server", "max_response_bytes", None)
    assert await run(api, query, token=ann["token"]) == within
    assert len(within["data"]["postList"]) == 9 and "errors" not in within


@pytest.mark.parametrize("app", [limits(max_cost=20)], indirect=True)
@pytest.mark.parametrize("query, variables", [
    ("{ postList(first: 1) { comments(first: -1) { id } } }", None),
    ("{ postList(first: 1) { comments(first: null) { id } } }", None),
    ("query($n: Int) { postList(first: 1) { comments(first: $n) { id } } }", {"n": -1}),
], ids=["negative", "null", "negative-variable"])
async def test_a_relation_list_given_no_cap_costs_the_default_first(api, query, variables):
    # 1 post x (itself + 15 comments x (itself + id)): 31, as without `first`.
    assert await run(api, query, variables) == refused("The query costs 31, more than the limit of 20.",
                                                       "QUERY_TOO_COSTLY")


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_list_of_plain_fields_is_measured_as_the_answer_it_writes(api, db, restify, ann, method):
    """A list answered without graphql-core's executor is built before anything else is: it is
    measured as its encoded answer, to the byte, and refused whole one byte past the budget."""
    await posts_of(db, ann["id"], 3, body="y" * 2_000)
    query = "{ postList(first: 10) { id title body views created_at } }"

    async def answer() -> bytes:
        response = await (api.post("/graphql", {"query": query}, token=ann["token"]) if method == "POST"
                          else api.get(f"/graphql?query={quote(query)}", token=ann["token"]))
        assert response.status == 200, response.body
        return response.body

    restify.settings.set("server", "max_response_bytes", None)
    whole = await answer()
    assert len(json.loads(whole)["data"]["postList"]) == 3
    restify.settings.set("server", "max_response_bytes", len(whole))
    assert await answer() == whole
    restify.settings.set("server", "max_response_bytes", len(whole) - 1)
    refused_whole = json.loads(await answer())
    assert refused_whole == {"data": None, "errors": [{**TOO_LARGE["errors"][0], "message": TOO_LARGE["errors"][0][
        "message"].replace(str(LIMIT), str(len(whole) - 1))}]}
