"""Actions and getters through GraphQL: `run<Type>Action` and `<type>Getter`
call the same operations as REST: the same policies, payload rules, answers and versions."""
import pytest

from tests.extensions import Installed, insert_posts
from tests.graphql.test_endpoint import failure, run

RUN = ('mutation($a: String!, $ids: [ID!], $all: Boolean, $id: ID, $p: JSON, $v: Int) '
       '{ runPostAction(action: $a, ids: $ids, all: $all, id: $id, payload: $p, version: $v) }')
GET = 'query($k: String!, $id: ID) { postGetter(key: $k, id: $id) }'


@pytest.fixture
def installed(registry):
    return Installed(registry)


async def create(api, token: str, title: str = "Hello") -> str:
    body = await run(api, 'mutation($t: String!) { createPost(input: {title: $t}) { id } }', {"t": title}, token=token)
    return body["data"]["createPost"]["id"]


async def is_published(db, id: str) -> bool:
    return (await db.collection("posts").find_by_id(id))["published"] in (True, 1)


async def test_run_post_action_publishes_on_ids_and_answers_affected(api, db, ann):
    ids = [await create(api, ann["token"]), await create(api, ann["token"])]
    body = await run(api, RUN, {"a": "publish-posts", "ids": ids}, token=ann["token"])
    assert body == {"data": {"runPostAction": {"affected": 2}}}
    assert [await is_published(db, id) for id in ids] == [True, True]


async def test_a_refusal_is_forbidden_and_nothing_is_written(api, db, ann, bob):
    mine, theirs = await create(api, ann["token"]), await create(api, bob["token"])
    body = await run(api, RUN, {"a": "publish-posts", "ids": [mine, theirs]}, token=ann["token"])
    assert body == {"data": {"runPostAction": None},
                    "errors": [failure(RUN, "runPostAction", "FORBIDDEN", "This action is unauthorized.")]}
    assert not await is_published(db, mine)


async def test_all_payload_rules_unknown_actions_and_dict_answers(api, db, ann, installed):
    await insert_posts(db, ann["id"], 3)
    bad = await run(api, RUN, {"a": "record-titles", "all": True, "p": {"reason": "x" * 21}}, token=ann["token"])
    assert bad["errors"] == [failure(RUN, "runPostAction", "VALIDATION_FAILED", "The given data was invalid.",
                                     errors={"reason": ["The reason may not be greater than 20 characters."]})]
    done = await run(api, RUN, {"a": "record-titles", "all": True, "p": {"reason": "r"}}, token=ann["token"])
    assert done == {"data": {"runPostAction": {"affected": 3}}}
    assert installed.record_titles.chunks == [["P000", "P001", "P002"]]
    unknown = await run(api, RUN, {"a": "nope", "all": True}, token=ann["token"])
    assert unknown["errors"] == [failure(RUN, "runPostAction", "NOT_FOUND", "Not found.")]
    archived = await run(api, RUN, {"a": "archive"}, token=ann["token"])
    assert archived == {"data": {"runPostAction": {"archived": 0, "by": ann["id"]}}}
    not_object = await run(api, RUN, {"a": "archive", "p": [1]}, token=ann["token"])
    assert not_object["errors"] == [failure(RUN, "runPostAction", "BAD_REQUEST",
                                            "The payload must be an object of the action's fields.")]


async def test_a_record_action_takes_the_version_read(api, db, ann):
    post = await create(api, ann["token"])
    stale = await run(api, RUN, {"a": "publish-posts", "id": post, "v": 4}, token=ann["token"])
    assert stale["errors"] == [failure(RUN, "runPostAction", "PRECONDITION_FAILED",
                                       "The record was changed since you read it.")]
    assert not await is_published(db, post)
    fresh = await run(api, RUN, {"a": "publish-posts", "id": post, "v": 1}, token=ann["token"])
    assert fresh == {"data": {"runPostAction": {"affected": 1}}}
    assert await is_published(db, post)


async def test_post_getter_on_the_collection_and_on_a_record(api, ann, installed):
    post = await create(api, ann["token"], "quiet")
    assert await run(api, GET, {"k": "post-stats"}) == {"data": {"postGetter": {"posts": 1, "published": 0}}}
    assert await run(api, GET, {"k": "post-stats", "id": post}) == {
        "data": {"postGetter": {"comments": 0, "views": 0, "tags": 0}}}
    assert await run(api, GET, {"k": "shout", "id": post}) == {"data": {"postGetter": "QUIET"}}
    missing = await run(api, GET, {"k": "post-stats", "id": "0" * 24})
    assert missing == {"data": {"postGetter": None}, "errors": [failure(GET, "postGetter", "NOT_FOUND", "Not found.")]}


async def test_all_selects_with_the_typed_filter_and_search_as_the_list_does(api, db, ann, installed):
    await insert_posts(db, ann["id"], 2, views=1)
    await insert_posts(db, ann["id"], 3, views=50)
    await db.collection("posts").insert({"title": "Other", "views": 70, "published": False, "user_id": ann["id"],
                                         "_version": 1})
    query = ('mutation($f: PostFilter, $s: String) { runPostAction(action: "record-titles", all: true, '
             'filter: $f, search: $s, payload: {reason: "r"}) }')
    body = await run(api, query, {"f": {"views": {"gte": 10}}, "s": "P0"}, token=ann["token"])
    assert body == {"data": {"runPostAction": {"affected": 3}}}
    assert installed.record_titles.chunks == [["P000", "P001", "P002"]]
    bad = await run(api, query, {"f": {"views": {"between": [1]}}}, token=ann["token"])
    assert bad["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert "filter.views.between" in bad["errors"][0]["message"]
    assert installed.record_titles.chunks == [["P000", "P001", "P002"]]
