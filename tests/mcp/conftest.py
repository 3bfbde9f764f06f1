"""MCP fixtures: the SDK's own client, over Streamable HTTP to the test server, as a user.

The endpoint's session manager runs in a task on the test's own IOLoop; `mcp_endpoint`
stops it before the loop closes, so nothing outlives the test.
"""
import json
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from service.mcp import endpoints

PREFIX = "/api/restify"
FORBIDDEN = {"message": "This action is unauthorized."}
NOT_FOUND = {"message": "Not found."}


@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's overrides when parametrized indirectly."""
    return {**config, **getattr(request, "param", {})}


@pytest.fixture
def mcp_endpoint(app, io_loop):
    (endpoint,) = endpoints(app)
    yield endpoint
    io_loop.run_sync(endpoint.close)


@pytest.fixture
def mcp_url(api, mcp_endpoint):
    return api.client.get_url("/mcp")


@pytest.fixture
def connect(mcp_url):
    """`async with connect(token) as session:` an initialized SDK ClientSession over /mcp."""
    @asynccontextmanager
    async def session_for(token: str):
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                streamable_http_client(mcp_url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session
    return session_for


def body(result: CallToolResult) -> Any:
    """The JSON a tool returned; its text and its structuredContent must say the same."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = json.loads(result.content[0].text)
    assert text == result.structured_content
    return text


def ok(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return body(result)


def error(result: CallToolResult) -> Any:
    assert result.is_error, result.content
    return body(result)


async def confirmed(session: ClientSession, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """A destructive tool's two steps: the preview, then the same call with its confirmation."""
    preview = ok(await session.call_tool(tool, arguments))
    return await session.call_tool(tool, {**arguments, "confirm": preview["confirm"]})


async def call_confirming(session: ClientSession, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """Calls a tool; a delete that answers with a preview is confirmed, as an agent whose user agreed would."""
    result = await session.call_tool(tool, arguments)
    if tool.endswith("-delete-tool") and not result.is_error:
        result = await session.call_tool(tool, {**arguments, "confirm": body(result)["confirm"]})
    return result
