"""`attachPostTags`, `detachPostTags`, `syncPostTags`: the REST operation
behind a mutation, with its policies, its 422s under the relation and PRECONDITION_FAILED for a stale
version; the selection reads the relation from the answer."""
import asyncio

import pytest

from tests.graphql.test_endpoint import run
from tests.hooks import PostHooks

PREFIX = "/api/restify"
CHANGE = ('mutation($id: ID!, $ids: [ID!]!, $v: Int) {{ {field}(id: $id, ids: $ids, version: $v) '
          '{{ id title version tags {{ id name }} }} }}')


async def created(api, token: str, name: str, body: dict) -> str:
    response = await api.post(f"{PREFIX}/{name}", body, token=token)
    assert response.status == 201, response.body
    return response.json["data"]["id"]


async def blog(api, user) -> tuple[str, dict[str, str]]:
    post = await created(api, user["token"], "posts", {"title": "Hello"})
    return post, {name: await created(api, user["token"], "tags", {"name": name}) for name in ("tech", "news", "misc")}


async def stored_tags(db, post: str) -> list[str]:
    return (await db.collection("posts").find_by_id(post))["tag_ids"]


async def change(api, user, operation: str, post: str, ids: list[str], version: int | None = None) -> dict:
    field = f"{operation}PostTags"
    return await run(api, CHANGE.format(field=field), {"id": post, "ids": ids, "v": version},
                     token=user["token"] if user else None)


async def test_attach_detach_and_sync_answer_the_post_with_its_tags(api, db, ann):
    post, tags = await blog(api, ann)
    attached = await change(api, ann, "attach", post, [tags["tech"], tags["news"]])
    assert attached == {"data": {"attachPostTags": {"id": post, "title": "Hello", "version": 2, "tags": [
        {"id": tags["tech"], "name": "tech"}, {"id": tags["news"], "name": "news"}]}}}
    detached = await change(api, ann, "detach", post, [tags["tech"]], version=2)
    assert detached["data"]["detachPostTags"]["tags"] == [{"id": tags["news"], "name": "news"}]
    synced = await change(api, ann, "sync", post, [tags["misc"]])
    assert synced["data"]["syncPostTags"] == {"id": post, "title": "Hello", "version": 4,
                                              "tags": [{"id": tags["misc"], "name": "misc"}]}
    assert await stored_tags(db, post) == [tags["misc"]]


async def test_other_selected_relations_come_with_the_answer(api, ann):
    post, tags = await blog(api, ann)
    query = ('mutation($id: ID!, $ids: [ID!]!) { attachPostTags(id: $id, ids: $ids) '
             '{ user { id } tags(first: 1) { name } } }')
    body = await run(api, query, {"id": post, "ids": list(tags.values())}, token=ann["token"])
    assert body == {"data": {"attachPostTags": {"user": {"id": ann["id"]}, "tags": [{"name": "tech"}]}}}


@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
async def test_refusals_are_errors_with_the_rest_codes_and_nothing_is_written(api, db, ann, bob, operation):
    post, tags = await blog(api, ann)
    field = f"{operation}PostTags"
    query = CHANGE.format(field=field)
    cases = [
        (bob, [tags["tech"]], None, ("FORBIDDEN", "This action is unauthorized.", {})),
        (None, [tags["tech"]], None, ("UNAUTHENTICATED", "Unauthenticated.", {})),
        (ann, [tags["tech"]], 5, ("PRECONDITION_FAILED", "The record was changed since you read it.", {})),
        (ann, ["nope"], None, ("VALIDATION_FAILED", "The given data was invalid.",
                               {"errors": {"tags": ["The selected tags is invalid: nope."]}})),
    ]
    for user, ids, version, (code, message, extensions) in cases:
        body = await change(api, user, operation, post, ids, version)
        (error,) = body["errors"]
        assert (body["data"], error["path"], error["message"], error["extensions"]) == (
            None, [field], message, {"code": code, **extensions}), query
    assert await stored_tags(db, post) == []


async def test_a_missing_post_is_not_found(api, ann):
    body = await change(api, ann, "attach", "0123456789abcdef01234567", ["0123456789abcdef01234568"])
    assert body["errors"][0]["extensions"] == {"code": "NOT_FOUND"}


async def test_the_mutations_run_the_update_hooks(api, ann, registry):
    post, tags = await blog(api, ann)
    hooks = PostHooks(registry)
    await change(api, ann, "attach", post, [tags["tech"]])
    assert hooks.calls == [("graphql", "before_update", post, None), ("graphql", "updated", post, "Hello")]


async def test_twenty_parallel_attaches_lose_none(api, db, ann):
    post = await created(api, ann["token"], "posts", {"title": "Busy"})
    ids = [await created(api, ann["token"], "tags", {"name": f"g{n:02}"}) for n in range(20)]
    bodies = await asyncio.gather(*(change(api, ann, "attach", post, [i]) for i in ids))
    assert all("errors" not in body for body in bodies)
    assert sorted(await stored_tags(db, post)) == sorted(ids)
