"""Soft deletes over MCP: the delete tool trashes, the restore tool brings back, `force` deletes for
good after a preview and its confirmation, and `trashed` on index and show."""
import pytest

from tests.mcp.conftest import ok
from tests.soft_deletes import created_post, soft_posts  # noqa: F401  (a fixture)


@pytest.mark.parametrize("config", [{"mcp": {"confirm_destructive": False}}], indirect=True)
async def test_delete_restore_and_forced_delete(soft_posts, connect, api, db, ann):
    post = await created_post(api, ann["token"])
    async with connect(ann["token"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "force" in tools["posts-delete-tool"].input_schema["properties"]
        assert tools["posts-index-tool"].input_schema["properties"]["trashed"]["enum"] == ["with", "only"]
        assert ok(await session.call_tool("posts-delete-tool", {"id": post["id"]})) == {"deleted": True,
                                                                                          "id": post["id"]}
        trashed = ok(await session.call_tool("posts-index-tool", {"trashed": "only"}))["data"]
        assert [item["id"] for item in trashed] == [post["id"]]
        restored = ok(await session.call_tool("posts-restore-tool", {"id": post["id"]}))
        assert restored["data"]["attributes"]["deleted_at"] is None
        preview = ok(await session.call_tool("posts-delete-tool", {"id": post["id"], "force": True}))
        assert preview["preview"]["ids"] == [post["id"]] and await db.collection("posts").find_by_id(post["id"])
        done = ok(await session.call_tool("posts-delete-tool", {"id": post["id"], "force": True,
                                                                "confirm": preview["confirm"]}))
    assert done == {"deleted": True, "id": post["id"]}
    assert await db.collection("posts").find_by_id(post["id"]) is None
