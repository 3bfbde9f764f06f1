"""Abilities over MCP, through the SDK's client: tools/list offers only what the token may call, a call
beyond its abilities is the REST 403 body as an error result; the caller's own tokens as tools."""
from tests.http.test_abilities import missing, post_of, token_for
from tests.mcp.conftest import error, ok
from tests.mcp.test_tools_list import tools_of

PREFIX = "/api/restify"
ACCOUNT_TOOLS = ["tokens-list-tool", "tokens-revoke-tool", "users-profile-tool"]  # no repository ability needed


async def test_a_read_token_is_offered_only_the_read_tools_of_posts(connect, api, ann):
    reader = await token_for(api, ann, "posts:read")
    assert sorted(await tools_of(connect, reader)) == sorted(
        ["posts-aggregate-tool", "posts-index-tool", "posts-show-tool", "posts-post-stats-getter-tool",
         *ACCOUNT_TOOLS])
    publisher = await token_for(api, ann, "posts:publish-posts", "tags:write")
    assert sorted(await tools_of(connect, publisher)) == sorted(
        ["posts-publish-posts-action-tool", "tags-index-tool", "tags-show-tool", "tags-store-tool", *ACCOUNT_TOOLS])


async def test_a_read_token_reads_posts_and_is_refused_a_write(connect, api, ann):
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    async with connect(reader) as session:
        listed = ok(await session.call_tool("posts-index-tool", {}))
        assert [p["id"] for p in listed["data"]] == [post["id"]]
        assert ok(await session.call_tool("posts-show-tool", {"id": post["id"]}))["data"]["id"] == post["id"]
        assert error(await session.call_tool("posts-store-tool", {"title": "x"})) == missing("posts:write")
        assert error(await session.call_tool("posts-update-tool", {"id": post["id"], "title": "x"})) == \
            missing("posts:write")
        assert error(await session.call_tool("comments-index-tool", {})) == missing("comments:read")
        assert error(await session.call_tool("posts-show-tool", {"id": post["id"], "include": "comments"})) == \
            missing("comments:read")
    assert (await api.get(f"{PREFIX}/posts/{post['id']}", token=ann["token"])).json["data"]["attributes"]["title"] \
        == "Hello"


async def test_the_caller_lists_and_revokes_their_own_tokens(connect, api, ann, bob):
    reader = await token_for(api, ann, "posts:read")
    bobs = (await api.get("/api/tokens", token=bob["token"])).json["data"][0]["id"]
    async with connect(reader) as session:
        tokens = ok(await session.call_tool("tokens-list-tool", {}))["data"]
        assert [(t["name"], t["abilities"], t["current"]) for t in tokens] == [
            ("api", ["*"], False), ("narrow", ["posts:read"], True)]
        assert all("token_hash" not in t and "token" not in t for t in tokens)
        first = tokens[0]["id"]
        assert ok(await session.call_tool("tokens-revoke-tool", {"id": first})) == {"revoked": True, "id": first}
        assert error(await session.call_tool("tokens-revoke-tool", {"id": bobs})) == {"message": "Not found."}
    assert (await api.get("/api/tokens", token=ann["token"])).status == 401
    assert (await api.get("/api/tokens", token=bob["token"])).status == 200
