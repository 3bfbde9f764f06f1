"""Search and sort through a BelongsTo relation, and sparse fields, on the MCP index tool:
the same arguments as REST, read by the same operation."""
from tests.http.test_relation_query import people, posts  # noqa: F401  (fixtures)
from tests.mcp.conftest import error
from tests.mcp.test_index_query import TOOL, call, titles


async def test_the_index_tool_searches_and_sorts_through_the_author(connect, ann, posts):
    assert titles(await call(connect, ann["token"], search="bo", sort="title")) == ["b1", "b2"]
    body = await call(connect, ann["token"], sort="-user.name", perPage=3, filter={"user_id": {"isNull": False}})
    assert (titles(body), body["meta"]["total"]) == (["z1", "z2", "b1"], 8)
    async with connect(ann["token"]) as session:
        refused = await session.call_tool(TOOL, {"sort": "user.name", "cursor": ""})
    assert "cursor" in error(refused)["message"]
