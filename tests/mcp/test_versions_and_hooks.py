"""Versions and repository hooks through MCP tools: the update and delete tools take
an optional `version`; a stale one is an error result; every hook runs for the tools' writes."""
import pytest

from tests.hooks import REFUSED, PostHooks, refused
from tests.mcp.conftest import PREFIX, call_confirming, error, ok

CHANGED = {"message": "The record was changed since you read it."}


async def create(api, token: str) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=token)
    assert response.status == 201, response.body
    return response.json["data"]


async def test_update_and_delete_with_the_current_version_write(connect, api, db, ann):
    post = await create(api, ann["token"])
    async with connect(ann["token"]) as session:
        changed = ok(await session.call_tool("posts-update-tool", {"id": post["id"], "title": "Bye", "version": 1}))
        assert (changed["data"]["attributes"]["title"], changed["data"]["meta"]["version"]) == ("Bye", 2)
        assert ok(await call_confirming(session, "posts-delete-tool", {"id": post["id"], "version": 2})) == {
            "deleted": True, "id": post["id"]}
    assert await db.collection("posts").find_by_id(post["id"]) is None


@pytest.mark.parametrize("tool, arguments", [("posts-update-tool", {"title": "Bye"}), ("posts-delete-tool", {})])
@pytest.mark.parametrize("version, answer", [
    (7, CHANGED), ("1", {"message": "version must be a whole number, the record's meta.version."})])
async def test_a_stale_or_malformed_version_is_an_error_result_and_changes_nothing(
        connect, api, db, ann, tool, arguments, version, answer):
    post = await create(api, ann["token"])
    before = await db.collection("posts").find_by_id(post["id"])
    async with connect(ann["token"]) as session:
        result = await call_confirming(session, tool, {"id": post["id"], **arguments, "version": version})
    assert error(result) == answer
    assert await db.collection("posts").find_by_id(post["id"]) == before


async def test_tools_run_the_repository_hooks_and_a_refusal_writes_nothing(connect, api, db, ann, registry):
    hooks = PostHooks(registry, mixed=True)
    async with connect(ann["token"]) as session:
        created = ok(await session.call_tool("posts-store-tool", {"title": "Hello"}))["data"]
        ok(await session.call_tool("posts-update-tool", {"id": created["id"], "title": "Bye"}))
        hooks.refuse["before_delete"] = refused()
        assert error(await call_confirming(session, "posts-delete-tool", {"id": created["id"]})) == REFUSED
    assert await db.collection("posts").find_by_id(created["id"]) is not None
    assert hooks.calls == [("mcp", "before_store", None, "Hello"), ("mcp", "stored", created["id"], "Hello"),
                           ("mcp", "before_update", created["id"], "Bye"), ("mcp", "updated", created["id"], "Bye"),
                           ("mcp", "before_delete", created["id"], "Bye")]
