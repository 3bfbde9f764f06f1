"""Clients nobody here wrote: the `mcp` SDK's OAuth client provider finds everything from the URL of
`/mcp` alone, registers, and sends headless Chromium to the sign-in page, where the user approves
fewer scopes than asked; the client then lists and calls tools within them and is refused one beyond.
The MCP Inspector's CLI calls a tool with an access token obtained the same way."""
import asyncio
import json
import os
import shutil
import subprocess
from urllib.parse import parse_qs, urlsplit

import pytest
from tornado.httpserver import HTTPServer
from tornado.testing import bind_unused_port
from tornado.web import Application, RequestHandler
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.explorer.browser import browser_page, needs_chromium
from tests.mcp.conftest import error, ok
from tests.oauth.conftest import tokens_for

INSPECTOR = "@modelcontextprotocol/inspector@0.21.1"
INSPECTOR_TIMEOUT = 600  # seconds: a cold `npx` fetches the Inspector and its dependencies first; one run


class _Memory:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@needs_chromium
async def test_the_sdk_client_signs_in_through_the_page_and_gets_only_the_scopes_granted(api, ann, mcp_url):
    created = await api.post("/api/restify/posts", {"title": "Seen by the agent"}, token=ann["token"])
    assert created.status == 201
    callback: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    class Landing(RequestHandler):  # the client's redirect URI: it takes the code, as a native app's does
        def get(self) -> None:
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.request.uri).query).items()}
            callback.set_result(AuthorizationCodeResult(code=query["code"], state=query.get("state")))
            self.finish("You may close this window.")

    sock, port = bind_unused_port()
    class NoIcon(RequestHandler):
        def get(self) -> None:
            self.set_status(204)

    landing = HTTPServer(Application([("/callback", Landing), ("/favicon.ico", NoIcon)]))
    landing.add_sockets([sock])
    redirect = f"http://127.0.0.1:{port}/callback"
    async with browser_page() as (page, problems):

        async def sign_in(url: str) -> None:
            await page.goto(url)
            assert await page.get_by_text("Test agent").count() == 1
            await page.get_by_label("Email").fill(ann["email"])
            await page.get_by_label("Password").fill("secret-pass")
            for box in await page.locator('input[name="scopes"]').all():
                if await box.get_attribute("value") != "posts:read":
                    await box.uncheck()
            await page.get_by_role("button", name="Approve").click()

        storage = _Memory()
        provider = OAuthClientProvider(
            mcp_url, OAuthClientMetadata(client_name="Test agent", redirect_uris=[redirect],
                                         grant_types=["authorization_code", "refresh_token"]),
            storage, redirect_handler=sign_in, callback_handler=lambda: callback)
        async with create_mcp_http_client(auth=provider) as http, \
                streamable_http_client(mcp_url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "posts-index-tool" in names and "posts-store-tool" not in names
            listed = ok(await session.call_tool("posts-index-tool", {}))
            assert [p["attributes"]["title"] for p in listed["data"]] == ["Seen by the agent"]
            refused = error(await session.call_tool("posts-store-tool", {"title": "Not allowed"}))
            assert "posts:write" in json.dumps(refused)
        assert storage.tokens is not None and storage.tokens.scope == "posts:read"
        assert problems == []
    landing.stop()
    titles = [p["attributes"]["title"] for p in (await api.get("/api/restify/posts", token=ann["token"])).json["data"]]
    assert titles == ["Seen by the agent"]


async def test_the_inspector_cli_calls_a_tool_with_the_access_token(api, ann, mcp_url):
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not on PATH: Node.js (with npm) is needed to run the MCP Inspector's CLI")
    created = await api.post("/api/restify/posts", {"title": "Seen by the Inspector"}, token=ann["token"])
    assert created.status == 201
    _, answer = await tokens_for(api, ann)
    env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false"}
    command = [npx, "--yes", INSPECTOR, "--cli", mcp_url, "--transport", "http", "--method", "tools/call",
               "--tool-name", "posts-index-tool", "--header", f"Authorization: Bearer {answer['access_token']}"]
    # The server runs on this test's loop: the CLI runs in a thread while the loop keeps serving.
    result = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True,
                                     timeout=INSPECTOR_TIMEOUT, check=False)
    assert result.returncode == 0, result.stderr
    called = json.loads(result.stdout)
    assert called.get("isError") in (None, False), called
    assert [p["attributes"]["title"] for p in called["structuredContent"]["data"]] == ["Seen by the Inspector"]
