"""The attach, detach and sync tools: the same operation
as the REST routes; detach and sync preview and wait for a confirmation; a read-only server has none."""
import pytest

from storage import VERSION
from tests.mcp.conftest import FORBIDDEN, NOT_FOUND, PREFIX, error, ok
from tests.mcp.test_tools_call import rest, rest_post
from tests.mcp.test_tools_list import tools_of

CHANGED = {"message": "The record was changed since you read it."}


async def tag_ids(api, token: str, *names: str) -> list[str]:
    ids = []
    for name in names:
        response = await api.post(f"{PREFIX}/tags", {"name": name}, token=token)
        assert response.status == 201, response.body
        ids.append(response.json["data"]["id"])
    return ids


async def stored_tags(db, post: str) -> list[str]:
    return (await db.collection("posts").find_by_id(post))["tag_ids"]


def preview_message(tool: str, action: str, expires_at: str, note: str = "") -> str:
    return (f"Nothing was changed.{note} To {action}, call {tool} again with the same arguments and "
            f'"confirm": the token below, before {expires_at}; it works once.')


async def test_the_tools_name_their_relations_and_say_what_they_do(connect, ann):
    tools = await tools_of(connect, ann["token"])
    for operation in ("attach", "detach", "sync"):
        tool = tools[f"posts-{operation}-tool"]
        schema = tool.input_schema
        assert (schema["required"], list(schema["properties"])) == (
            ["id", "relation", "ids"], ["id", "relation", "ids", "version"] + (["confirm"] if operation != "attach"
                                                                              else []))
        assert schema["properties"]["relation"]["enum"] == ["tags"]
        assert schema["properties"]["ids"]["minItems"] == (0 if operation == "sync" else 1)
        assert f"POST {PREFIX}/posts/<id>/{operation}/<relation>" in tool.description
        assert "Relations: tags (ids of tags)." in tool.description
        hints = (tool.annotations.read_only_hint, tool.annotations.destructive_hint, tool.annotations.idempotent_hint)
        assert hints == (False, operation != "attach", True)
    assert "Two steps" in tools["posts-detach-tool"].description
    assert "Two steps" not in tools["posts-attach-tool"].description
    assert "comments-attach-tool" not in tools  # comments have no BelongsToMany relation


async def test_attach_runs_at_once_and_answers_what_rest_answers(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    ids = await tag_ids(api, ann["token"], "tech", "news")
    async with connect(ann["token"]) as session:
        attached = ok(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags", "ids": ids}))
    assert await stored_tags(db, post) == ids
    assert attached == await rest(api, f"/posts/{post}", ann["token"], related="tags")
    assert attached["data"]["meta"]["version"] == 2


@pytest.mark.parametrize("operation, sent, left", [("detach", [0], [1]), ("sync", [1, 2], [1, 2])])
async def test_detach_and_sync_preview_what_they_would_change_then_run_with_the_confirmation(
        connect, api, db, ann, operation, sent, left):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    ids = await tag_ids(api, ann["token"], "tech", "news", "misc")
    tool = f"posts-{operation}-tool"
    arguments = {"id": post, "relation": "tags", "ids": [ids[i] for i in sent]}
    async with connect(ann["token"]) as session:
        ok(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags", "ids": ids[:2]}))
        record = (await rest(api, f"/posts/{post}", ann["token"]))["data"]
        preview = ok(await session.call_tool(tool, arguments))
        assert preview == {
            "message": preview_message(tool, operation, preview["expires_at"]),
            "confirm": preview["confirm"], "expires_at": preview["expires_at"],
            "preview": {"action": operation, "ids": [post], "records": [record], "relation": "tags",
                        "attach": [ids[2]] if operation == "sync" else [], "detach": [ids[0]]},
        }
        assert await stored_tags(db, post) == ids[:2]  # the preview changed nothing
        done = ok(await session.call_tool(tool, {**arguments, "confirm": preview["confirm"]}))
    assert await stored_tags(db, post) == [ids[i] for i in left]
    assert [t["id"] for t in done["data"]["relationships"]["tags"]] == [ids[i] for i in left]


async def test_a_record_changed_after_the_preview_is_previewed_again_not_changed(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    ids = await tag_ids(api, ann["token"], "tech", "news")
    arguments = {"id": post, "relation": "tags", "ids": [ids[0]]}
    async with connect(ann["token"]) as session:
        ok(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags", "ids": ids[:1]}))
        token = ok(await session.call_tool("posts-detach-tool", arguments))["confirm"]
        ok(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags", "ids": ids[1:]}))
        again = ok(await session.call_tool("posts-detach-tool", {**arguments, "confirm": token}))
    assert again["message"] == preview_message(
        "posts-detach-tool", "detach", again["expires_at"],
        " The confirmation was not used: the record changed since it was previewed.")
    assert await stored_tags(db, post) == ids


async def test_refusals_come_before_any_preview_as_rest_gives_them(connect, api, db, ann, bob):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    (tag,) = await tag_ids(api, ann["token"], "tech")
    async with connect(bob["token"]) as session:
        for operation in ("attach", "detach", "sync"):
            refused = error(await session.call_tool(f"posts-{operation}-tool",
                                                    {"id": post, "relation": "tags", "ids": [tag]}))
            assert refused == FORBIDDEN
    async with connect(ann["token"]) as session:
        missing = error(await session.call_tool("posts-detach-tool", {"id": "0123456789abcdef01234567",
                                                                      "relation": "tags", "ids": [tag]}))
        unknown = error(await session.call_tool("posts-sync-tool", {"id": post, "relation": "comments", "ids": []}))
        invalid = error(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags",
                                                                      "ids": ["nope"]}))
        no_relation = error(await session.call_tool("posts-attach-tool", {"id": post, "ids": [tag]}))
    assert missing == NOT_FOUND
    assert unknown == {"message": "The relation 'comments' of posts is not a BelongsToMany: only those are attached, "
                                  "detached and synced."}
    assert invalid == {"message": "The given data was invalid.",
                       "errors": {"tags": ["The selected tags is invalid: nope."]}}
    assert no_relation == {"message": "relation must be the name of a relation, a string."}
    assert await stored_tags(db, post) == []


async def test_a_stale_version_is_refused_and_the_current_one_runs(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    (tag,) = await tag_ids(api, ann["token"], "tech")
    arguments = {"id": post, "relation": "tags", "ids": [tag]}
    async with connect(ann["token"]) as session:
        assert error(await session.call_tool("posts-attach-tool", {**arguments, "version": 5})) == CHANGED
        assert ok(await session.call_tool("posts-attach-tool", {**arguments, "version": 1}))["data"]["meta"][
            "version"] == 2
    assert (await db.collection("posts").find_by_id(post))[VERSION] == 2


@pytest.mark.parametrize("config", [{"mcp": {"confirm_destructive": False}}], indirect=True)
async def test_without_confirm_destructive_a_detach_runs_at_once(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    ids = await tag_ids(api, ann["token"], "tech", "news")
    async with connect(ann["token"]) as session:
        ok(await session.call_tool("posts-attach-tool", {"id": post, "relation": "tags", "ids": ids}))
        detached = ok(await session.call_tool("posts-detach-tool", {"id": post, "relation": "tags", "ids": ids[:1]}))
    assert [t["id"] for t in detached["data"]["relationships"]["tags"]] == ids[1:]
    assert await stored_tags(db, post) == ids[1:]


@pytest.mark.parametrize("config", [{"mcp": {"read_only": True}}], indirect=True)
async def test_a_read_only_server_turns_the_three_off(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Tagged")
    (tag,) = await tag_ids(api, ann["token"], "tech")
    tools = await tools_of(connect, ann["token"])
    assert not [name for name in tools if name.split("-")[1] in ("attach", "detach", "sync")]
    async with connect(ann["token"]) as session:
        for operation in ("attach", "detach", "sync"):
            name = f"posts-{operation}-tool"
            assert error(await session.call_tool(name, {"id": post, "relation": "tags", "ids": [tag]})) == {
                "message": f"This server is read-only: {name} is turned off."}
    assert await stored_tags(db, post) == []
