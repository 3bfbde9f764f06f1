"""The tool list follows the registry the app serves: nothing is cached at start-up."""
from service.core.declarations.registry import Registry
from tests.mcp.conftest import ok
from tests.mcp.test_tools_list import DEMO_TOOLS

TAG_TOOLS = ["tags-index-tool", "tags-show-tool", "tags-store-tool"]


async def test_swapping_the_registry_changes_tools_list_and_tools_call(connect, ann, restify):
    full = restify.registry
    without_tags = Registry({name: r for name, r in full.resources.items() if name != "tags"}, full.policies)
    async with connect(ann["token"]) as session:
        assert sorted(t.name for t in (await session.list_tools()).tools) == DEMO_TOOLS
        ok(await session.call_tool("tags-store-tool", {"name": "before"}))

        restify.swap_registry(without_tags)
        assert sorted(t.name for t in (await session.list_tools()).tools) == sorted(set(DEMO_TOOLS) - set(TAG_TOOLS))
        gone = await session.call_tool("tags-index-tool", {})
        assert gone.is_error
        assert gone.structured_content == {"message": "Unknown tool 'tags-index-tool'; list the tools again."}

        restify.swap_registry(full)
        assert sorted(t.name for t in (await session.list_tools()).tools) == DEMO_TOOLS
        assert ok(await session.call_tool("tags-index-tool", {}))["meta"]["total"] == 1


async def test_a_changed_capability_changes_the_tools(connect, ann, restify):
    posts = restify.registry.get("posts")
    read_only = type("PostRepository", (type(posts.repository),), {"mcp": True})
    resources = {**restify.registry.resources, "posts": type(posts)(posts.name, read_only(), posts.model,
                                                                     posts.relations)}
    restify.swap_registry(Registry(resources, restify.registry.policies))
    async with connect(ann["token"]) as session:
        names = [t.name for t in (await session.list_tools()).tools if t.name.startswith("posts-")]
        refused = await session.call_tool("posts-store-tool", {"title": "x"})
    assert names == ["posts-index-tool", "posts-show-tool"]
    assert refused.is_error
