"""Versions and repository hooks through GraphQL: `version` on update<Type> and
delete<Type>, PRECONDITION_FAILED when it is stale, and every hook run by the mutations."""
import pytest

from storage import Filter
from tests.graphql.test_endpoint import failure, run
from tests.hooks import PostHooks, refused

CHANGED = ("PRECONDITION_FAILED", "The record was changed since you read it.")
UPDATE = 'mutation($id: ID!, $v: Int) { updatePost(id: $id, input: {title: "Bye"}, version: $v) { id title version } }'
DELETE = 'mutation($id: ID!, $v: Int) { deletePost(id: $id, version: $v) }'


async def create(api, token: str) -> dict:
    body = await run(api, 'mutation { createPost(input: {title: "Hello"}) { id title version } }', token=token)
    return body["data"]["createPost"]


async def test_records_show_their_version_and_a_current_or_absent_version_writes(api, db, ann):
    post = await create(api, ann["token"])
    assert post["version"] == 1
    assert await run(api, UPDATE, {"id": post["id"], "v": 1}, token=ann["token"]) == {
        "data": {"updatePost": {"id": post["id"], "title": "Bye", "version": 2}}}
    assert (await run(api, UPDATE, {"id": post["id"]}, token=ann["token"]))["data"]["updatePost"]["version"] == 3
    assert await run(api, DELETE, {"id": post["id"], "v": 3}, token=ann["token"]) == {"data": {"deletePost": True}}
    assert await db.collection("posts").find_by_id(post["id"]) is None


@pytest.mark.parametrize("mutation, field", [(UPDATE, "updatePost"), (DELETE, "deletePost")])
async def test_a_stale_version_is_precondition_failed_and_changes_nothing(api, db, ann, mutation, field):
    post = await create(api, ann["token"])
    before = await db.collection("posts").find_by_id(post["id"])
    body = await run(api, mutation, {"id": post["id"], "v": 7}, token=ann["token"])
    (error,) = body["errors"]
    assert (error["message"], error["path"], error["extensions"]) == (CHANGED[1], [field], {"code": CHANGED[0]})
    assert body["data"] is None
    assert await db.collection("posts").find_by_id(post["id"]) == before


async def test_mutations_run_the_repository_hooks(api, db, ann, registry):
    hooks = PostHooks(registry)
    hooks.values["before_store"] = {"body": "from the hook"}
    post = await create(api, ann["token"])
    await run(api, UPDATE, {"id": post["id"]}, token=ann["token"])
    await run(api, DELETE, {"id": post["id"]}, token=ann["token"])
    assert hooks.calls == [("graphql", "before_store", None, "Hello"), ("graphql", "stored", post["id"], "Hello"),
                           ("graphql", "before_update", post["id"], "Bye"), ("graphql", "updated", post["id"], "Bye"),
                           ("graphql", "before_delete", post["id"], "Bye"), ("graphql", "deleted", post["id"], "Bye")]


async def test_a_refusing_before_hook_is_validation_failed_and_nothing_is_written(api, db, ann, registry):
    hooks = PostHooks(registry)
    hooks.refuse["before_store"] = refused()
    query = 'mutation { createPost(input: {title: "Hello"}) { id } }'
    assert await run(api, query, token=ann["token"]) == {"data": None, "errors": [
        failure(query, "createPost", "VALIDATION_FAILED", "The given data was invalid.",
                errors={"title": ["Hooks say no."]})]}
    assert await db.collection("posts").find(Filter()) == []
