"""Computed fields over MCP: in tool answers, read-only (never a write argument)."""
from tests.computed_fields import computed_posts  # noqa: F401  (a fixture)
from tests.mcp.conftest import ok


async def test_computed_fields_in_answers_and_not_in_write_arguments(computed_posts, connect, ann):
    async with connect(ann["token"]) as session:
        created = ok(await session.call_tool("posts-store-tool", {"title": "Hello"}))
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert created["data"]["attributes"]["comment_count"] == 0
    assert "comment_count" not in tools["posts-store-tool"].input_schema["properties"]
    assert "comment_count" in tools["posts-store-tool"].description  # named among the read-only ones
