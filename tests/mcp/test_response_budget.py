"""Answers' sizes over MCP: an index tool's page is cut to `mcp.max_result_bytes` while it is built (the
records past what fits are neither serialized nor given relations, and no more is encoded than is
answered), and any answer past `server.max_response_bytes` is a tool error.
"""
import json

import pytest

from service.mcp.limits import cut_page, dumps
from tests.http.test_index_queries import seed_post
from tests.mcp.conftest import error, ok
from tests.mcp.test_tools_call import rest


def too_large(limit: int) -> dict[str, str]:
    return {"message": f"The answer would be larger than {limit} bytes (server.max_response_bytes); ask for "
                       "fewer related records, fewer fields (fields=) or a smaller perPage."}


async def posts_of(db, user_id: str, count: int, body: str) -> None:
    for n in range(count):
        await seed_post(db, f"Post {n}", body=body, user_id=user_id)


@pytest.mark.parametrize("config", [{"mcp": {"max_result_bytes": 8000}}], indirect=True)
async def test_records_past_the_cap_get_no_relations_loaded(connect, db, commands, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    arguments = {"user_id": ann["id"], "perPage": 100}
    async with connect(ann["token"]) as session:
        plain = ok(await session.call_tool("posts-index-tool", arguments))
        commands.reset()
        # Every post of 10 KB, and its author's 8 posts of 10 KB under it: no record fits in 8,000 bytes.
        attack = ok(await session.call_tool("posts-index-tool", {**arguments, "include": "user.posts"}))
    reads = commands.reads()
    # The page and its count; the author and their posts were never read (users are read with tokens only).
    assert [read for read in reads if read[1] == "posts"] == [("find", "posts"), ("aggregate", "posts")]
    assert reads.count(("find", "users")) == reads.count(("find", "personal_access_tokens"))
    assert attack["data"] == plain["data"] == [] and attack["meta"] == plain["meta"]
    assert attack["cut"] == plain["cut"] == {"returned": 0, "records": 8, "message": (
        "This result was cut to the first 0 of its 8 records to stay under 8000 bytes (mcp.max_result_bytes). "
        "Ask for less: a smaller perPage, a narrower search or filters, fewer includes, or one record at a time "
        "with the show tool.")}


@pytest.mark.parametrize("config", [{"mcp": {"max_result_bytes": 30_000}}], indirect=True)
@pytest.mark.parametrize("include", ["user", "user.posts", "comments,user"])
async def test_a_cut_page_keeps_the_most_records_that_fit(connect, api, db, ann, include):
    await posts_of(db, ann["id"], 8, "é" * 2500)
    async with connect(ann["token"]) as session:
        result = await session.call_tool("posts-index-tool", {"perPage": 100, "include": include})
    listed = ok(result)
    full = await rest(api, "/posts", ann["token"], perPage=100, include=include)
    kept = listed["cut"]["returned"]
    assert len(result.content[0].text.encode()) <= 30_000
    assert listed["data"] == full["data"][:kept] and listed["meta"] == full["meta"] and listed["cut"]["records"] == 8
    assert len(dumps(cut_page(full, kept + 1, 8, 30_000)).encode()) > 30_000  # one more would not fit


@pytest.mark.parametrize("config", [{"server": {"max_response_bytes": 50_000}, "mcp": {"max_result_bytes": 0}}],
                         indirect=True)
async def test_an_answer_past_the_response_budget_is_a_tool_error(connect, db, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    async with connect(ann["token"]) as session:
        shown = await session.call_tool("users-show-tool", {"id": ann["id"], "include": "posts"})
        listed = await session.call_tool("posts-index-tool", {"perPage": 100, "include": "user.posts"})
        assert error(shown) == error(listed) == too_large(50_000)
        profile = await session.call_tool("users-profile-tool", {"include": "posts", "fields": {"posts": ["title"]}})
    assert len(json.loads(profile.content[0].text)["relationships"]["posts"]) == 8
