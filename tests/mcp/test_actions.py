"""Actions and getters as MCP tools: one tool per action
and per getter, with the action's payload fields in the input schema; the same policies and answers as
REST; a destructive action previews and runs only with its confirmation; read_only turns actions off."""
import pytest

from tests.extensions import Installed, insert_posts
from tests.http.test_write_pace import Clock
from tests.mcp.conftest import FORBIDDEN, NOT_FOUND, error, ok
from tests.mcp.test_tools_call import rest_post
from tests.mcp.test_tools_list import tools_of

INVALID = "The given data was invalid."


@pytest.fixture
def installed(registry):
    return Installed(registry)


async def is_published(db, id: str) -> bool:
    return (await db.collection("posts").find_by_id(id))["published"] in (True, 1)


async def test_each_action_and_getter_is_a_tool_with_its_fields_and_hints(connect, ann, installed):
    tools = await tools_of(connect, ann["token"])
    names = sorted(n for n in tools if n.endswith(("-action-tool", "-getter-tool")))
    assert names == ["posts-archive-action-tool", "posts-post-stats-getter-tool", "posts-publish-posts-action-tool",
                     "posts-record-titles-action-tool", "posts-shout-getter-tool"]
    record_titles = tools["posts-record-titles-action-tool"]
    schema = record_titles.input_schema
    assert (list(schema["properties"]), schema["required"], schema["additionalProperties"]) == (
        ["reason", "ids", "all", "where"], ["reason"], False)
    assert schema["properties"]["reason"] == {"type": "string", "maxLength": 20, "minLength": 1,
                                              "description": "Reason."}
    assert list(schema["properties"]["where"]["properties"]) == ["search", "filter", "views", "published", "user_id"]
    assert list(tools["posts-archive-action-tool"].input_schema["properties"]) == ["confirm"]  # standalone
    assert tools["posts-shout-getter-tool"].input_schema["required"] == ["id"]  # offered on records only
    assert "required" not in tools["posts-post-stats-getter-tool"].input_schema
    hints = {name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
             for name, t in tools.items()}
    assert hints["posts-record-titles-action-tool"] == hints["posts-publish-posts-action-tool"] == (False, False, False)
    assert hints["posts-archive-action-tool"] == (False, True, False)
    assert hints["posts-post-stats-getter-tool"] == (True, False, True)


async def test_publish_posts_runs_on_ids_as_the_caller(connect, api, db, ann, bob):
    mine = [await rest_post(api, "posts", ann["token"], title=t) for t in ("One", "Two")]
    theirs = await rest_post(api, "posts", bob["token"], title="Theirs")
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool("posts-publish-posts-action-tool", {"ids": [mine[0], theirs]}))
        assert refused == FORBIDDEN
        assert not await is_published(db, mine[0])
        done = ok(await session.call_tool("posts-publish-posts-action-tool", {"ids": mine}))
    assert done == {"data": {"affected": 2}}
    assert [await is_published(db, id) for id in mine] == [True, True]


async def test_all_with_where_and_a_bad_payload(connect, db, ann, installed):
    await insert_posts(db, ann["id"], 3)
    await insert_posts(db, ann["id"], 2, published=True)
    async with connect(ann["token"]) as session:
        bad = error(await session.call_tool("posts-record-titles-action-tool", {"all": True, "reason": "x" * 21}))
        assert bad == {"message": INVALID, "errors": {"reason": ["The reason may not be greater than 20 characters."]}}
        done = ok(await session.call_tool("posts-record-titles-action-tool",
                                          {"all": True, "where": {"published": False}, "reason": "r"}))
    assert done == {"data": {"affected": 3}}
    assert installed.record_titles.chunks == [["P000", "P001", "P002"]]


async def test_all_narrowed_by_the_typed_filter_object_of_the_index_tool(connect, db, ann, installed):
    await insert_posts(db, ann["id"], 2, views=1)
    await insert_posts(db, ann["id"], 2, views=50, published=True)
    async with connect(ann["token"]) as session:
        done = ok(await session.call_tool("posts-record-titles-action-tool", {
            "all": True, "reason": "r", "where": {"filter": {"views": {"between": [10, 60]}}}}))
        bad = error(await session.call_tool("posts-record-titles-action-tool", {
            "all": True, "reason": "r", "where": {"filter": {"views": {"gte": "many"}}}}))
    assert done == {"data": {"affected": 2}}
    assert installed.record_titles.chunks == [["P000", "P001"]]
    assert "filter.views.gte" in bad["message"]


async def test_a_destructive_action_previews_then_runs_with_its_confirmation(connect, ann, installed):
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-archive-action-tool", {}))
        assert preview == {
            "message": "Nothing was changed. To run Archive Everything, call posts-archive-action-tool again with "
                       f'the same arguments and "confirm": the token below, before {preview["expires_at"]}; it '
                       "works once.",
            "confirm": preview["confirm"], "expires_at": preview["expires_at"],
            "preview": {"action": "archive", "ids": [], "versions": {}}}
        done = ok(await session.call_tool("posts-archive-action-tool", {"confirm": preview["confirm"]}))
        assert done == {"data": {"archived": 0, "by": ann["id"]}}
        spent = ok(await session.call_tool("posts-archive-action-tool", {"confirm": preview["confirm"]}))
        assert spent["message"].startswith("Nothing was changed. The confirmation was not accepted")


async def test_a_destructive_action_on_records_changed_since_the_preview_previews_again(connect, api, db, ann,
                                                                                      registry, installed):
    installed.record_titles.destructive = True
    post = await rest_post(api, "posts", ann["token"], title="Kept")
    arguments = {"ids": [post], "reason": "r"}
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-record-titles-action-tool", arguments))
        assert preview["preview"] == {"action": "record-titles", "ids": [post], "versions": {post: 1}}
        assert (await api.patch(f"/api/restify/posts/{post}", {"views": 3}, token=ann["token"])).status == 200
        again = ok(await session.call_tool("posts-record-titles-action-tool", {**arguments, "confirm": preview["confirm"]}))
        assert again["message"].startswith("Nothing was changed. The confirmation was not used: a record changed")
        assert again["preview"]["versions"] == {post: 2}
        assert installed.record_titles.chunks == []
        done = ok(await session.call_tool("posts-record-titles-action-tool", {**arguments, "confirm": again["confirm"]}))
    assert done == {"data": {"affected": 1}} and installed.record_titles.chunks == [["Kept"]]


async def test_getter_tools_answer_like_rest_and_hidden_records_are_not_found(connect, api, ann, installed):
    post = await rest_post(api, "posts", ann["token"], title="quiet", views=4)
    async with connect(ann["token"]) as session:
        assert ok(await session.call_tool("posts-post-stats-getter-tool", {"id": post})) == {
            "data": {"comments": 0, "views": 4, "tags": 0}}
        assert ok(await session.call_tool("posts-post-stats-getter-tool", {})) == {
            "data": {"posts": 1, "published": 0}}
        assert ok(await session.call_tool("posts-shout-getter-tool", {"id": post})) == {"data": "QUIET"}
        assert error(await session.call_tool("posts-shout-getter-tool", {"id": "0" * 24})) == NOT_FOUND


@pytest.mark.parametrize("config", [{"mcp": {"read_only": True}}], indirect=True)
async def test_read_only_turns_off_action_tools_but_not_getter_tools(connect, api, ann, installed):
    tools = await tools_of(connect, ann["token"])
    assert not [n for n in tools if n.endswith("-action-tool")]
    assert "posts-post-stats-getter-tool" in tools
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool("posts-publish-posts-action-tool", {"all": True}))
    assert refused == {"message": "This server is read-only: posts-publish-posts-action-tool is turned off."}


@pytest.mark.parametrize("config", [{"throttle": {"writes_per_minute": 60, "write_burst": 1},
                                     "bulk": {"max_items": 1}}], indirect=True)
async def test_a_confirmed_action_is_one_write_of_the_users_pace_and_its_preview_none(connect, api, restify, ann,
                                                                                      installed):
    clock = Clock(passing=False)
    clock.drive(restify)  # one write at once, then one a second
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-archive-action-tool", {}))
        done = ok(await session.call_tool("posts-archive-action-tool", {"confirm": preview["confirm"]}))
    assert done == {"data": {"archived": 0, "by": ann["id"]}}
    assert clock.slept == []  # the preview took nothing: the run had the one write there was
    assert (await api.post("/api/restify/posts", {"title": "next"}, token=ann["token"])).status == 201
    assert clock.slept == [1.0]  # the run took it: the next write waits its second
