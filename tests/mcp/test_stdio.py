"""`restify mcp`: the same tools over stdin/stdout, as the user whose token is in RESTIFY_TOKEN."""
import asyncio
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import DATABASE_TIMEOUT_MS, ROOT
from tests.mcp.conftest import FORBIDDEN, PREFIX, error, ok
from tests.mcp.test_tools_list import DEMO_TOOLS
from tests.processes import RUN_WAIT

RESTIFY = Path(sys.executable).with_name("restify")


def command(mongodb_uri: str, db_name: str, token: str | None) -> tuple[str, list[str], dict[str, str]]:
    env = {"MONGODB_URI": mongodb_uri, "RESTIFY_DATABASE_NAME": db_name,
           "RESTIFY_DATABASE_TIMEOUT_MS": str(DATABASE_TIMEOUT_MS)}
    if token is not None:
        env["RESTIFY_TOKEN"] = token
    if RESTIFY.exists():
        return str(RESTIFY), ["--app-dir", str(ROOT), "mcp"], env
    return sys.executable, ["-m", "service.cli", "--app-dir", str(ROOT), "mcp"], env


async def test_stdio_serves_every_tool_as_the_token_user(api, db, mongodb_uri, db_name, ann, bob):
    bobs = (await api.post(f"{PREFIX}/posts", {"title": "Bob's"}, token=bob["token"])).json["data"]["id"]
    executable, args, env = command(mongodb_uri, db_name, ann["token"])
    parameters = StdioServerParameters(command=executable, args=args, env=env, cwd=str(ROOT))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert sorted(t.name for t in (await session.list_tools()).tools) == DEMO_TOOLS
        created = ok(await session.call_tool("posts-store-tool", {"title": "Over stdio"}))["data"]
        listed = ok(await session.call_tool("posts-index-tool", {"sort": "title", "include": "user"}))
        profile = ok(await session.call_tool("users-profile-tool", {"include": "posts"}))
        denied = error(await session.call_tool("posts-update-tool", {"id": bobs, "title": "Mine now"}))
        invalid = error(await session.call_tool("posts-store-tool", {}))
    assert created["attributes"]["user_id"] == ann["id"]
    assert [p["attributes"]["title"] for p in listed["data"]] == ["Bob's", "Over stdio"]
    assert listed["meta"]["path"] == f"{PREFIX}/posts"
    assert profile["id"] == ann["id"] and [p["id"] for p in profile["relationships"]["posts"]] == [created["id"]]
    assert denied == FORBIDDEN
    assert invalid == {"message": "The given data was invalid.", "errors": {"title": ["The title field is required."]}}
    assert (await db.collection("posts").find_by_id(bobs))["title"] == "Bob's"


@pytest.mark.parametrize("token, message", [
    (None, "restify mcp: set RESTIFY_TOKEN to a bearer token (restify token:create EMAIL prints one)"),
    ("", "restify mcp: set RESTIFY_TOKEN to a bearer token (restify token:create EMAIL prints one)"),
    ("1|not-a-token", "restify mcp: RESTIFY_TOKEN is not a valid token"),
])
async def test_stdio_refuses_to_start_without_a_valid_token(db, mongodb_uri, db_name, token, message):
    executable, args, env = command(mongodb_uri, db_name, token)
    process = await asyncio.create_subprocess_exec(
        executable, *args, env={"PATH": "/usr/bin:/bin", **env}, cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(process.communicate(b""), timeout=RUN_WAIT)
    assert process.returncode == 2
    assert stdout == b""
    assert stderr.decode().strip() == message
