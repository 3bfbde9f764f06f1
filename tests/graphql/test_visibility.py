"""GraphQL obeys the read rules: lists, relation fields and single records carry each
policy's scope; what a user may not see is NOT_FOUND, like an id that never existed."""
from typing import Any

import pytest

from tests.graphql.test_endpoint import FORBIDDEN, MISSING_ID, NOT_FOUND, failure, run
from tests.http.test_index_queries import config  # noqa: F401  (a fixture)
from tests.policy_rules import own_scope, published_or_own_scope, rules  # noqa: F401  (a fixture)
from tests.servers import keys_read

PREFIX = "/api/restify"


async def created(api, name: str, token: str, **values: Any) -> str:
    response = await api.post(f"{PREFIX}/{name}", values, token=token)
    assert response.status == 201, response.body
    return response.json["data"]["id"]


async def thread(api, ann, bob) -> dict[str, str]:
    post = await created(api, "posts", ann["token"], title="Thread", published=True)
    return {"post": post, "ann": await created(api, "comments", ann["token"], body="Ann's", post_id=post),
            "bob": await created(api, "comments", bob["token"], body="Bob's", post_id=post)}


async def test_relation_fields_and_lists_carry_the_related_scope(api, rules, ann, bob):
    ids = await thread(api, ann, bob)
    rules("comments", scope=own_scope)
    query = f'{{ post(id: "{ids["post"]}") {{ comments {{ id }} }} postList {{ comments {{ id }} }} commentList {{ id }} }}'
    for who in ("ann", "bob"):
        mine = [{"id": ids[who]}]
        token = ann["token"] if who == "ann" else bob["token"]
        assert await run(api, query, token=token) == {
            "data": {"post": {"comments": mine}, "postList": [{"comments": mine}], "commentList": mine}}
    assert await run(api, query) == {"data": {"post": {"comments": []}, "postList": [{"comments": []}],
                                              "commentList": []}}


async def test_a_belongs_to_field_carries_the_related_scope(api, rules, ann, bob):
    draft = await created(api, "posts", ann["token"], title="Draft")
    comment = await created(api, "comments", ann["token"], body="Note", post_id=draft)
    rules("posts", scope=published_or_own_scope)
    query = f'{{ comment(id: "{comment}") {{ post {{ id }} }} commentList {{ post {{ id }} }} }}'
    assert await run(api, query, token=bob["token"]) == {"data": {"comment": {"post": None},
                                                                  "commentList": [{"post": None}]}}
    mine = {"post": {"id": draft}}
    assert await run(api, query, token=ann["token"]) == {"data": {"comment": mine, "commentList": [mine]}}


@pytest.mark.parametrize("who", ["guest", "bob"])
@pytest.mark.parametrize("operation, field", [
    ('{{ post(id: "{id}") {{ id }} }}', "post"),
    ('mutation {{ updatePost(id: "{id}", input: {{title: "Taken"}}) {{ id }} }}', "updatePost"),
    ('mutation {{ deletePost(id: "{id}") }}', "deletePost"),
])
async def test_a_hidden_record_is_not_found_like_a_missing_one(api, db, rules, ann, bob, who, operation, field):
    draft = await created(api, "posts", ann["token"], title="Draft")
    rules("posts", scope=published_or_own_scope)
    token = bob["token"] if who == "bob" else None
    for id in (draft, MISSING_ID):
        query = operation.format(id=id)
        body = await run(api, query, token=token)
        assert body["errors"] == [failure(query, field, *NOT_FOUND)]
    assert (await db.collection("posts").find_by_id(draft))["title"] == "Draft"


async def test_a_visible_record_the_user_may_not_change_is_still_forbidden(api, rules, ann, bob):
    post = await created(api, "posts", ann["token"], title="Public", published=True)
    rules("posts", scope=published_or_own_scope)
    query = f'mutation {{ deletePost(id: "{post}") }}'
    assert (await run(api, query, token=bob["token"]))["errors"] == [failure(query, "deletePost", *FORBIDDEN)]


@pytest.mark.parametrize("config", [{"query": {"max_related_rows": 1}}], indirect=True)
async def test_a_list_over_max_related_rows_is_a_bad_request(api, ann, bob):
    await thread(api, ann, bob)
    query = "{ postList { comments { id } } }"
    message = ("This request would load more than 1 related records (query.max_related_rows); "
               "ask for fewer records or relations.")
    body = await run(api, query, token=ann["token"])
    assert body["errors"][0]["message"] == message
    assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("config", [{"query": {"max_related_rows": 5}}], indirect=True)
async def test_a_relation_written_in_many_places_is_refused_before_it_is_read(api, commands, ann, bob):
    await thread(api, ann, bob)
    commands.reset()
    # The post under each of its 2 comments, with its 2 comments each time: 1 + 2 + 1 x (1 + 2) = 6 rows.
    body = await run(api, "{ commentList { post { comments { id } } } }", token=ann["token"])
    message = ("This request would load more than 5 related records (query.max_related_rows); "
               "ask for fewer records or relations.")
    assert body["errors"][0]["message"] == message
    assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    # Only the page's keys are read (the post is shared by its comments); the post's comments are only counted.
    assert [read for read in commands.reads() if read[1] == "comments"] == [keys_read("comments"),
                                                                           ("aggregate", "comments")]
