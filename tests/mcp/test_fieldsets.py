"""`fields` on the MCP index, show and profile tools: the REST answer with the same sparse fieldsets."""
from tests.mcp.conftest import PREFIX, error, ok


async def test_index_show_and_profile_tools_take_fields_as_rest_does(connect, ann, api):
    created = await api.post(f"{PREFIX}/posts", {"title": "Hello", "body": "Text", "views": 2}, token=ann["token"])
    post_id = created.json["data"]["id"]
    async with connect(ann["token"]) as session:
        listed = ok(await session.call_tool("posts-index-tool", {"fields": ["title", "user"], "include": "user"}))
        shown = ok(await session.call_tool("posts-show-tool", {
            "id": post_id, "include": "user", "fields": {"posts": ["views"], "users": ["name"]}}))
        profile = ok(await session.call_tool("users-profile-tool", {"fields": ["name"]}))
    rest = await api.get(f"{PREFIX}/posts?fields=title,user&include=user", token=ann["token"])
    assert listed == rest.json
    [post] = listed["data"]
    assert post["attributes"] == {"title": "Hello"}
    assert post["relationships"]["user"][0]["attributes"]["name"] == "Ann"
    assert shown["data"]["attributes"] == {"views": 2}
    assert "relationships" not in shown["data"]  # `user` is not listed for posts
    assert profile["attributes"] == {"name": "Ann"}


async def test_an_unknown_field_is_the_rest_400_body(connect, ann):
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool("posts-index-tool", {"fields": {"users": ["password"]}}))
    message = "The field 'password' cannot be selected for users."
    assert refused == {"message": message, "errors": {"fields[users]": [message]}}
