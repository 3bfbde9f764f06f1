"""Guardrails for agents: tool annotations, preview-then-confirm before a delete,
a read-only server, and a cap on result sizes."""
import json

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import ROOT
from tests.mcp.conftest import FORBIDDEN, NOT_FOUND, body, error, ok
from tests.mcp.test_stdio import command
from tests.mcp.test_tools_call import rest, rest_post
from tests.mcp.test_tools_list import tools_of
from tests.policy_rules import rules  # noqa: F401  (a fixture)

ARGUMENTS_CHANGED = " The confirmation was not accepted (wrong, used, expired, or for another call)."
RECORD_CHANGED = " The confirmation was not used: the record changed since it was previewed."


def preview_of(session_result, post_id: str, shown: dict, note: str = "") -> dict:
    """Checks a preview's exact shape against the record as the user sees it; returns it."""
    preview = ok(session_result)
    assert preview == {
        "message": f"Nothing was changed.{note} To delete, call posts-delete-tool again with the same arguments "
                   f'and "confirm": the token below, before {preview["expires_at"]}; it works once.',
        "confirm": preview["confirm"], "expires_at": preview["expires_at"],
        "preview": {"action": "delete", "ids": [post_id], "records": [shown["data"]]},
    }
    return preview


# -- annotations -----------------------------------------------------------------------------------
async def test_every_tool_says_whether_it_reads_writes_destroys_or_repeats_safely(connect, ann):
    tools = await tools_of(connect, ann["token"])
    hints = {name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
             for name, t in tools.items()}
    assert hints["posts-index-tool"] == hints["posts-show-tool"] == hints["users-profile-tool"] == (True, False, True)
    assert hints["posts-store-tool"] == (False, False, False)
    assert hints["posts-update-tool"] == (False, False, True)
    assert hints["posts-delete-tool"] == (False, True, True)
    assert all(t.annotations.read_only_hint is not None and t.annotations.destructive_hint is not None
               and t.annotations.idempotent_hint is not None for t in tools.values())


# -- preview, then confirm -------------------------------------------------------------------------
async def test_a_delete_first_previews_and_changes_nothing_then_runs_with_its_confirmation(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Doomed")
    shown = await rest(api, f"/posts/{post}", ann["token"])
    async with connect(ann["token"]) as session:
        preview = preview_of(await session.call_tool("posts-delete-tool", {"id": post}), post, shown)
        assert await db.collection("posts").find_by_id(post) is not None
        deleted = ok(await session.call_tool("posts-delete-tool", {"id": post, "confirm": preview["confirm"]}))
    assert deleted == {"deleted": True, "id": post}
    assert await db.collection("posts").find_by_id(post) is None


async def test_a_confirmation_works_once_and_only_for_the_call_it_previewed(connect, api, db, ann):
    post, other = [await rest_post(api, "posts", ann["token"], title=t) for t in ("One", "Two")]
    async with connect(ann["token"]) as session:
        token = ok(await session.call_tool("posts-delete-tool", {"id": post}))["confirm"]
        # another record with this token: a preview of that one, and the token is spent
        preview_of(await session.call_tool("posts-delete-tool", {"id": other, "confirm": token}), other,
                   await rest(api, f"/posts/{other}", ann["token"]), ARGUMENTS_CHANGED)
        again = await session.call_tool("posts-delete-tool", {"id": post, "confirm": token})
        preview_of(again, post, await rest(api, f"/posts/{post}", ann["token"]), ARGUMENTS_CHANGED)
        for wrong in ("nonsense", "0" * 24 + "|x", ok(again)["confirm"] + "x"):
            result = await session.call_tool("posts-delete-tool", {"id": post, "confirm": wrong})
            assert ok(result)["message"].startswith("Nothing was changed." + ARGUMENTS_CHANGED)
    assert {p["id"] for p in await db.collection("posts").find_within("id", [post, other])} == {post, other}


async def test_a_confirmation_belongs_to_the_user_who_saw_the_preview(connect, api, db, rules, ann, bob):
    rules("posts", delete=lambda user, record: True)
    post = await rest_post(api, "posts", ann["token"], title="Shared", published=True)
    async with connect(ann["token"]) as session:
        token = ok(await session.call_tool("posts-delete-tool", {"id": post}))["confirm"]
    async with connect(bob["token"]) as session:
        result = ok(await session.call_tool("posts-delete-tool", {"id": post, "confirm": token}))
    assert result["message"].startswith("Nothing was changed." + ARGUMENTS_CHANGED)
    assert await db.collection("posts").find_by_id(post) is not None


async def test_a_confirmation_from_one_process_is_redeemed_by_another(connect, api, db, mongodb_uri, db_name, ann):
    post = await rest_post(api, "posts", ann["token"], title="Across")
    async with connect(ann["token"]) as session:
        token = ok(await session.call_tool("posts-delete-tool", {"id": post}))["confirm"]
    executable, args, env = command(mongodb_uri, db_name, ann["token"])
    parameters = StdioServerParameters(command=executable, args=args, env=env, cwd=str(ROOT))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        deleted = ok(await session.call_tool("posts-delete-tool", {"id": post, "confirm": token}))
    assert deleted == {"deleted": True, "id": post}
    assert await db.collection("posts").find_by_id(post) is None


async def test_a_record_changed_after_its_preview_is_previewed_again_not_deleted(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Before")
    async with connect(ann["token"]) as session:
        token = ok(await session.call_tool("posts-delete-tool", {"id": post}))["confirm"]
        await db.collection("posts").update(post, {"title": "After", "updated_at": "2099-01-01T00:00:00.000Z"})
        fresh = preview_of(await session.call_tool("posts-delete-tool", {"id": post, "confirm": token}), post,
                           await rest(api, f"/posts/{post}", ann["token"]), RECORD_CHANGED)
        assert fresh["preview"]["records"][0]["attributes"]["title"] == "After"
        assert (await db.collection("posts").find_by_id(post))["title"] == "After"
        assert ok(await session.call_tool("posts-delete-tool", {"id": post, "confirm": fresh["confirm"]}))["deleted"]
    assert await db.collection("posts").find_by_id(post) is None


async def test_an_expired_confirmation_gives_a_fresh_preview(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Later")
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-delete-tool", {"id": post}))
        expires = preview["expires_at"]
        (stored,) = await db.collection("confirmations").find_within("expires_at", [expires])
        await db.collection("confirmations").update(stored["id"], {"expires_at": "2000-01-01T00:00:00.000Z"})
        result = ok(await session.call_tool("posts-delete-tool", {"id": post, "confirm": preview["confirm"]}))
    assert result["message"].startswith("Nothing was changed." + ARGUMENTS_CHANGED)
    assert await db.collection("posts").find_by_id(post) is not None


async def test_only_a_hash_of_the_confirmation_is_stored_and_it_expires_in_five_minutes(connect, api, db, ann):
    from datetime import datetime, timezone
    post = await rest_post(api, "posts", ann["token"], title="Stored")
    async with connect(ann["token"]) as session:
        preview = ok(await session.call_tool("posts-delete-tool", {"id": post}))
    (stored,) = await db.collection("confirmations").find_within("expires_at", [preview["expires_at"]])
    secret = preview["confirm"].split("|", 1)[1]
    assert secret not in json.dumps(stored) and stored["user_id"] == ann["id"]
    left = datetime.fromisoformat(preview["expires_at"].replace("Z", "+00:00")) - datetime.now(timezone.utc)
    assert 240 < left.total_seconds() <= 300


async def test_a_delete_the_caller_may_not_make_is_refused_before_any_preview(connect, api, db, ann, bob):
    post = await rest_post(api, "posts", ann["token"], title="Ann's", published=True)
    async with connect(bob["token"]) as session:
        assert error(await session.call_tool("posts-delete-tool", {"id": post})) == FORBIDDEN
        assert error(await session.call_tool("posts-delete-tool", {"id": "0" * 24})) == NOT_FOUND
    assert await db.collection("confirmations").find_within("user_id", [bob["id"]]) == []


@pytest.mark.parametrize("config", [{"mcp": {"confirm_destructive": False}}], indirect=True)
async def test_without_confirm_destructive_a_delete_runs_at_once(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Gone")
    async with connect(ann["token"]) as session:
        assert ok(await session.call_tool("posts-delete-tool", {"id": post})) == {"deleted": True, "id": post}
    assert await db.collection("posts").find_by_id(post) is None
    assert list((await tools_of(connect, ann["token"]))["posts-delete-tool"].input_schema["properties"]) == ["id", "version"]  # no confirm


# -- read-only -------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", [{"mcp": {"read_only": True}}], indirect=True)
async def test_a_read_only_server_lists_no_write_tool_and_refuses_them(connect, api, db, ann):
    post = await rest_post(api, "posts", ann["token"], title="Kept")
    tools = await tools_of(connect, ann["token"])
    assert sorted(tools) == ["comments-index-tool", "comments-show-tool", "posts-index-tool",
                             "posts-post-stats-getter-tool", "posts-show-tool",  # getters only read
                             "tags-index-tool", "tags-show-tool", "tokens-list-tool", "users-index-tool", "users-profile-tool",
                             "users-show-tool"]
    async with connect(ann["token"]) as session:
        for name, arguments in (("posts-store-tool", {"title": "New"}), ("posts-update-tool", {"id": post, "title": "x"}),
                                ("posts-delete-tool", {"id": post})):
            assert error(await session.call_tool(name, arguments)) == {
                "message": f"This server is read-only: {name} is turned off."}
        assert ok(await session.call_tool("posts-show-tool", {"id": post}))["data"]["id"] == post
    assert [p["title"] for p in await db.collection("posts").find_within("user_id", [ann["id"]])] == ["Kept"]


# -- result size -----------------------------------------------------------------------------------
@pytest.mark.parametrize("config", [{"mcp": {"max_result_bytes": 3000}}], indirect=True)
async def test_a_page_over_the_cap_keeps_the_records_that_fit_and_says_how_to_ask_for_less(connect, api, ann):
    for number in range(10):
        await rest_post(api, "posts", ann["token"], title=f"Post {number}", body="x" * 200)
    async with connect(ann["token"]) as session:
        result = await session.call_tool("posts-index-tool", {"sort": "title"})
    listed = ok(result)
    assert len(result.content[0].text.encode()) <= 3000
    full = await rest(api, "/posts", ann["token"], sort="title")
    kept = len(listed["data"])
    assert 0 < kept < 10 and listed["data"] == full["data"][:kept] and listed["meta"] == full["meta"]
    assert listed["cut"] == {"returned": kept, "records": 10, "message": (
        f"This result was cut to the first {kept} of its 10 records to stay under 3000 bytes "
        "(mcp.max_result_bytes). Ask for less: a smaller perPage, a narrower search or filters, fewer includes, "
        "or one record at a time with the show tool.")}


@pytest.mark.parametrize("config", [{"mcp": {"max_result_bytes": 600}}], indirect=True)
async def test_one_record_over_the_cap_is_cut_as_text_with_a_note(connect, api, ann):
    post = await rest_post(api, "posts", ann["token"], title="Long", body="é" * 1000)
    full = json.dumps(await rest(api, f"/posts/{post}", ann["token"]), separators=(",", ":"), ensure_ascii=False)
    async with connect(ann["token"]) as session:
        result = await session.call_tool("posts-show-tool", {"id": post})
    assert not result.is_error and result.structured_content is None
    cut, note = (content.text for content in result.content)
    assert note == ("[The result above was cut at 600 bytes (mcp.max_result_bytes) and is incomplete JSON. "
                    "Ask for less: a smaller perPage, a narrower search or filters, fewer includes, or one record "
                    "at a time with the show tool.]")
    assert full.startswith(cut) and len(cut.encode()) + len(note.encode()) <= 600 and len(cut) > 100


async def test_results_under_the_default_cap_are_whole(connect, api, ann):
    post = await rest_post(api, "posts", ann["token"], title="Short")
    async with connect(ann["token"]) as session:
        assert body(await session.call_tool("posts-show-tool", {"id": post})) == \
            await rest(api, f"/posts/{post}", ann["token"])

