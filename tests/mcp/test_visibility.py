"""MCP tools obey the read rules: index totals, `include` and single records carry each
policy's scope; a record the caller may not see is the REST API's 404 body."""
import pytest

from tests.mcp.conftest import FORBIDDEN, NOT_FOUND, error, ok
from tests.mcp.test_tools_call import rest_post
from tests.policy_rules import own_scope, published_or_own_scope, rules  # noqa: F401  (a fixture)

MISSING_ID = "0" * 24


async def test_index_and_include_carry_the_related_scope(connect, api, rules, ann, bob):
    post = await rest_post(api, "posts", ann["token"], title="Thread", published=True)
    mine = {who["id"]: await rest_post(api, "comments", who["token"], body="c", post_id=post) for who in (ann, bob)}
    rules("comments", scope=own_scope)
    async with connect(bob["token"]) as session:
        listed = ok(await session.call_tool("comments-index-tool", {}))
        shown = ok(await session.call_tool("posts-show-tool", {"id": post, "include": "comments"}))
        posts = ok(await session.call_tool("posts-index-tool", {"include": "comments"}))
    assert ([c["id"] for c in listed["data"]], listed["meta"]["total"]) == ([mine[bob["id"]]], 1)
    assert [c["id"] for c in shown["data"]["relationships"]["comments"]] == [mine[bob["id"]]]
    assert [c["id"] for c in posts["data"][0]["relationships"]["comments"]] == [mine[bob["id"]]]


@pytest.mark.parametrize("tool, arguments", [
    ("posts-show-tool", {}), ("posts-update-tool", {"title": "Taken"}), ("posts-delete-tool", {}),
])
async def test_a_hidden_record_is_not_found_like_a_missing_one(connect, api, db, rules, ann, bob, tool, arguments):
    draft = await rest_post(api, "posts", ann["token"], title="Secret plan")
    rules("posts", scope=published_or_own_scope)
    async with connect(bob["token"]) as session:
        for id in (draft, MISSING_ID):
            assert error(await session.call_tool(tool, {"id": id, **arguments})) == NOT_FOUND
        searched = ok(await session.call_tool("posts-index-tool", {"search": "Secret p"}))
    assert (searched["data"], searched["meta"]["total"]) == ([], 0)
    assert (await db.collection("posts").find_by_id(draft))["title"] == "Secret plan"


async def test_a_visible_record_the_caller_may_not_change_is_still_forbidden(connect, api, rules, ann, bob):
    post = await rest_post(api, "posts", ann["token"], title="Public", published=True)
    rules("posts", scope=published_or_own_scope)
    async with connect(bob["token"]) as session:
        assert error(await session.call_tool("posts-delete-tool", {"id": post})) == FORBIDDEN
