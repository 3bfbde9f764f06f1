"""Fields by policy over MCP: hide_from("mcp") and can_see leave fields out of tool answers and
of the index tool's filters."""
from tests.field_policies import field_policies  # noqa: F401  (a fixture)
from tests.mcp.conftest import PREFIX, error, ok


async def test_fields_hidden_from_mcp_or_from_the_user_are_absent(field_policies, connect, api, ann, bob):
    created = await api.post(f"{PREFIX}/posts", {"title": "Hello", "views": 7}, token=ann["token"])
    id = created.json["data"]["id"]
    assert "cover" in created.json["data"]["attributes"]  # REST shows it
    async with connect(ann["token"]) as session:
        mine = ok(await session.call_tool("posts-show-tool", {"id": id}))["data"]["attributes"]
    assert "cover" not in mine and mine["views"] == 7
    async with connect(bob["token"]) as session:
        theirs = ok(await session.call_tool("posts-show-tool", {"id": id}))["data"]["attributes"]
        refused = error(await session.call_tool("posts-index-tool", {"filter": {"views": {"gte": 1}}}))
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert "cover" not in theirs and "views" not in theirs
    assert "views" in refused["message"]
    described = tools["posts-index-tool"].input_schema["properties"]
    assert "views" not in described["filter"]["properties"] and "published" in described["filter"]["properties"]
