"""The bulk tools: `{"items": [...]}`, all or nothing, errors keyed
"<index>.<field>"; bulk delete previews every record with its version and runs only when confirmed."""
import pytest

from storage import Filter
from tests.mcp.conftest import FORBIDDEN, error, ok
from tests.mcp.test_tools_call import rest, rest_post
from tests.mcp.test_tools_list import tools_of

INVALID = "The given data was invalid."
CHANGED = {"message": "The record was changed since you read it."}
RECORD_CHANGED = " The confirmation was not used: a record changed since it was previewed."


@pytest.fixture
def every_bulk_tool(registry):
    """The posts repository offers all three bulk tools (the demo offers bulk-store only)."""
    type(registry.get("posts").repository).mcp = ("index", "show", "bulk-store", "bulk-update", "bulk-delete")


async def titles(db) -> list[str]:
    return [d["title"] for d in await db.collection("posts").find(Filter(), sort=[("id", 1)])]


async def test_the_demo_offers_bulk_store_on_posts_as_a_write_that_is_not_idempotent(connect, ann):
    tool = (await tools_of(connect, ann["token"]))["posts-bulk-store-tool"]
    hints = tool.annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (False, False, False)
    items = tool.input_schema["properties"]["items"]
    assert (tool.input_schema["required"], items["minItems"], items["maxItems"]) == (["items"], 1, 100)
    assert items["items"]["required"] == ["title"]


async def test_bulk_store_creates_every_item_or_none(connect, db, ann):
    async with connect(ann["token"]) as session:
        created = ok(await session.call_tool("posts-bulk-store-tool", {"items": [{"title": "One"}, {"title": "Two"}]}))
        refused = error(await session.call_tool("posts-bulk-store-tool",
                                                {"items": [{"title": "Three"}, {"title": "x" * 300}]}))
    assert [(d["attributes"]["title"], d["attributes"]["user_id"]) for d in created["data"]] == [
        ("One", ann["id"]), ("Two", ann["id"])]
    assert refused == {"message": INVALID, "errors": {"1.title": ["The title may not be greater than 255 characters."]}}
    assert await titles(db) == ["One", "Two"]


async def test_bulk_tools_carry_their_annotations(connect, ann, every_bulk_tool):
    tools = await tools_of(connect, ann["token"])
    hints = {name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
             for name, t in tools.items() if "-bulk-" in name}
    assert hints == {"posts-bulk-store-tool": (False, False, False), "posts-bulk-update-tool": (False, False, True),
                     "posts-bulk-delete-tool": (False, True, True)}
    assert list(tools["posts-bulk-delete-tool"].input_schema["properties"]) == ["items", "confirm"]
    assert tools["posts-bulk-update-tool"].input_schema["properties"]["items"]["items"]["required"] == ["id"]


async def test_bulk_update_patches_and_a_stale_version_refuses_every_item(connect, api, db, ann, every_bulk_tool):
    one, two = [await rest_post(api, "posts", ann["token"], title=t) for t in ("One", "Two")]
    async with connect(ann["token"]) as session:
        changed = ok(await session.call_tool("posts-bulk-update-tool", {"items": [
            {"id": one, "title": "Uno", "version": 1}, {"id": two, "views": 4}]}))
        stale = error(await session.call_tool("posts-bulk-update-tool", {"items": [
            {"id": one, "title": "A", "version": 2}, {"id": two, "title": "B", "version": 1}]}))
    assert [(d["attributes"]["title"], d["attributes"]["views"], d["meta"]["version"]) for d in changed["data"]] == [
        ("Uno", 0, 2), ("Two", 4, 2)]
    assert stale == CHANGED
    assert await titles(db) == ["Uno", "Two"]


async def test_bulk_delete_previews_every_record_then_deletes_them_all_when_confirmed(connect, api, db, ann,
                                                                                      every_bulk_tool):
    one, two, _ = [await rest_post(api, "posts", ann["token"], title=t) for t in ("One", "Two", "Kept")]
    shown = [(await rest(api, f"/posts/{id}", ann["token"]))["data"] for id in (one, two)]
    arguments = {"items": [one, two]}
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-bulk-delete-tool", arguments))
        assert await titles(db) == ["One", "Two", "Kept"]
        deleted = ok(await session.call_tool("posts-bulk-delete-tool", {**arguments, "confirm": preview["confirm"]}))
    assert preview == {
        "message": "Nothing was changed. To delete, call posts-bulk-delete-tool again with the same arguments and "
                   f'"confirm": the token below, before {preview["expires_at"]}; it works once.',
        "confirm": preview["confirm"], "expires_at": preview["expires_at"],
        "preview": {"action": "delete", "ids": [one, two], "records": shown}}
    assert deleted == {"deleted": True, "ids": [one, two]}
    assert await titles(db) == ["Kept"]


async def test_a_record_changed_after_the_preview_gets_a_fresh_preview_and_nothing_is_deleted(
        connect, api, db, ann, every_bulk_tool):
    one, two = [await rest_post(api, "posts", ann["token"], title=t) for t in ("One", "Two")]
    async with connect(ann["token"]) as session:
        token = ok(await session.call_tool("posts-bulk-delete-tool", {"items": [one, two]}))["confirm"]
        assert (await api.patch(f"/api/restify/posts/{two}", {"views": 3}, token=ann["token"])).status == 200
        fresh = ok(await session.call_tool("posts-bulk-delete-tool", {"items": [one, two], "confirm": token}))
        assert fresh["message"].startswith("Nothing was changed." + RECORD_CHANGED)
        assert [r["meta"]["version"] for r in fresh["preview"]["records"]] == [1, 2]
        assert await titles(db) == ["One", "Two"]
        assert ok(await session.call_tool("posts-bulk-delete-tool", {"items": [one, two],
                                                                     "confirm": fresh["confirm"]}))["deleted"]
    assert await titles(db) == []


async def test_a_bulk_delete_the_user_may_not_run_is_refused_before_any_preview(connect, api, db, ann, bob,
                                                                                 every_bulk_tool):
    mine = await rest_post(api, "posts", ann["token"], title="Mine")
    theirs = await rest_post(api, "posts", bob["token"], title="Bob's")
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool("posts-bulk-delete-tool", {"items": [mine, theirs]}))
        unknown = error(await session.call_tool("posts-bulk-delete-tool", {"items": [mine, "0" * 24]}))
    assert refused == FORBIDDEN
    assert unknown == {"message": INVALID, "errors": {"1.id": ["The selected id is invalid."]}}
    assert await db.collection("confirmations").count(Filter()) == 0
    assert await titles(db) == ["Mine", "Bob's"]


@pytest.mark.parametrize("config", [{"mcp": {"confirm_destructive": False}}], indirect=True)
async def test_without_confirmation_a_bulk_delete_runs_at_once(connect, api, db, ann, every_bulk_tool):
    one = await rest_post(api, "posts", ann["token"], title="One")
    async with connect(ann["token"]) as session:
        assert ok(await session.call_tool("posts-bulk-delete-tool", {"items": [one]})) == {"deleted": True,
                                                                                          "ids": [one]}
    assert await titles(db) == []


@pytest.mark.parametrize("config", [{"mcp": {"read_only": True}}], indirect=True)
async def test_a_read_only_server_offers_and_runs_no_bulk_tool(connect, api, db, ann, every_bulk_tool):
    one = await rest_post(api, "posts", ann["token"], title="One")
    assert not [name for name in await tools_of(connect, ann["token"]) if "-bulk-" in name]
    async with connect(ann["token"]) as session:
        for name, items in (("posts-bulk-store-tool", [{"title": "New"}]),
                            ("posts-bulk-update-tool", [{"id": one, "title": "x"}]),
                            ("posts-bulk-delete-tool", [one])):
            assert error(await session.call_tool(name, {"items": items})) == {
                "message": f"This server is read-only: {name} is turned off."}
    assert await titles(db) == ["One"]


@pytest.mark.parametrize("config", [{"mcp": {"confirm_destructive": False}}, {}], indirect=True,
                         ids=["without-confirmation", "with-confirmation"])
async def test_items_that_are_not_an_array_are_refused_with_the_rest_message(connect, db, ann, every_bulk_tool):
    async with connect(ann["token"]) as session:
        for tool in ("posts-bulk-store-tool", "posts-bulk-update-tool", "posts-bulk-delete-tool"):
            for arguments in ({}, {"items": {"$gt": ""}}):
                assert error(await session.call_tool(tool, arguments)) == {
                    "message": "A bulk write takes a JSON array of items."}, (tool, arguments)
            assert error(await session.call_tool(tool, {"items": []})) == {
                "message": INVALID, "errors": {"items": ["At least one item is required."]}}
    assert await titles(db) == []
