"""/mcp over HTTP: bearer auth before the SDK, stateless JSON responses, Host/Origin checks, lifecycle."""
import asyncio
import json
from contextlib import closing

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from tornado.httpserver import HTTPServer
from tornado.simple_httpclient import SimpleAsyncHTTPClient
from tornado.testing import bind_unused_port

from service.config import Settings
from service.console.application import make_app
from service.core.declarations.app import Restify
from service.mcp import endpoints
from tests.mcp.conftest import ok

JSON_RPC = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def call_tool(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


async def rpc(api, message: dict, token: str | None = None, **headers: str):
    return await api.request("POST", "/mcp", body=json.dumps(message), token=token, headers={**JSON_RPC, **headers})


# -- authentication --------------------------------------------------------------------------------
@pytest.mark.parametrize("authorization", [None, "Bearer ", "Bearer 1|nope", "Basic YW5uOnNlY3JldA=="])
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_without_a_valid_token_the_answer_is_401_before_the_sdk(api, mcp_endpoint, method, authorization):
    headers = {**JSON_RPC, **({"Authorization": authorization} if authorization else {})}
    response = await api.request(method, "/mcp", body=json.dumps(LIST_TOOLS) if method == "POST" else None,
                                 headers=headers)
    assert response.status == 401
    assert response.json == {"message": "Unauthenticated."}
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert mcp_endpoint._task is None  # the SDK was never started for it


async def test_the_sdk_client_is_refused_without_a_token(mcp_url, caplog):
    with pytest.raises(ExceptionGroup) as raised:
        async with Client(mcp_url, mode="legacy"):
            pass
    assert raised.group_contains(MCPError, match="Server returned an error response", depth=2)
    assert [(r.access["method"], r.access["route"], r.access["status"]) for r in caplog.records
            if r.name == "restify.access"] == [("POST", "/mcp", 401)]


# -- stateless JSON responses -------------------------------------------------------------------------
async def test_a_tool_call_needs_no_session_and_answers_json(api, mcp_endpoint, ann):
    response = await rpc(api, call_tool("tags-store-tool", {"name": "python"}), ann["token"])
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert "Mcp-Session-Id" not in response.headers
    result = response.json["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["data"]["attributes"]["name"] == "python"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


async def test_any_process_can_answer_any_request(api, connect, ann, db, config, registry, io_loop):
    """Two web processes (two apps and servers over one database): no sticky sessions are needed."""
    other = make_app(Restify(Settings(config), registry, db))
    sock, port = bind_unused_port()
    server = HTTPServer(other)
    server.add_socket(sock)
    try:
        async with connect(ann["token"]) as session:
            created = ok(await session.call_tool("posts-store-tool", {"title": "From one"}))
        with closing(SimpleAsyncHTTPClient(force_instance=True)) as client:
            response = await client.fetch(
                f"http://127.0.0.1:{port}/mcp", method="POST", raise_error=False,
                body=json.dumps(call_tool("posts-show-tool", {"id": created["data"]["id"]})),
                headers={**JSON_RPC, "Authorization": f"Bearer {ann['token']}"})
        assert response.code == 200
        assert json.loads(response.body)["result"]["structuredContent"] == created
    finally:
        server.stop()
        await server.close_all_connections()
        for endpoint in endpoints(other):
            await endpoint.close()


async def test_the_high_level_client_works_too(mcp_url, ann):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {ann['token']}"}) as http, \
            Client(streamable_http_client(mcp_url, http_client=http)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        profile = await client.call_tool("users-profile-tool", {})
    assert "users-profile-tool" in names
    assert profile.structured_content["id"] == ann["id"]


async def test_concurrent_calls_on_one_connection(connect, ann):
    async with connect(ann["token"]) as session:
        results = await asyncio.gather(*(session.call_tool("tags-store-tool", {"name": f"t{i}"}) for i in range(8)))
        listed = ok(await session.call_tool("tags-index-tool", {"sort": "name"}))
    assert all(not r.is_error for r in results)
    assert [t["attributes"]["name"] for t in listed["data"]] == [f"t{i}" for i in range(8)]


# -- Host and Origin checks (DNS rebinding) -------------------------------------------------------------
@pytest.mark.parametrize("headers, status, body", [
    ({"Host": "evil.example"}, 421, {
        "message": 'MCP refused the Host header "evil.example": it is not in the setting mcp.allowed_hosts. Allow it '
                   'in restify.toml ([mcp] allowed_hosts = [..., "evil.example"]) or in the environment '
                   '(RESTIFY_MCP_ALLOWED_HOSTS=\'["evil.example"]\', which replaces the default list); a trailing ":*" '
                   'allows any port. ["*"] turns the check off, behind a proxy that checks hosts itself.'}),
    ({"Origin": "http://evil.example"}, 403, {
        "message": 'MCP refused the Origin header "http://evil.example": it is not in the setting mcp.allowed_origins. '
                   'Allow it in restify.toml ([mcp] allowed_origins = [..., "http://evil.example"]) or in the '
                   'environment (RESTIFY_MCP_ALLOWED_ORIGINS=\'["http://evil.example"]\', which replaces the default '
                   'list); a trailing ":*" allows any port.'}),
])
async def test_foreign_hosts_and_origins_are_refused_naming_the_setting_that_allows_them(
        api, mcp_endpoint, ann, headers, status, body):
    response = await rpc(api, LIST_TOOLS, ann["token"], **headers)
    assert (response.status, response.json) == (status, body)


async def test_local_origins_with_any_port_are_accepted(api, mcp_endpoint, ann):
    response = await rpc(api, LIST_TOOLS, ann["token"], Origin="http://localhost:5173")
    assert response.status == 200, response.body


@pytest.mark.parametrize("config", [{"mcp": {"allowed_hosts": "api.example.com",
                                             "allowed_origins": ["https://app.example.com"]}}], indirect=True)
async def test_allowed_hosts_and_origins_come_from_settings(api, mcp_endpoint, ann):
    assert (await rpc(api, LIST_TOOLS, ann["token"])).status == 421  # 127.0.0.1 is no longer listed
    assert (await rpc(api, LIST_TOOLS, ann["token"], Host="api.example.com",
                      Origin="https://app.example.com")).status == 200
    assert (await rpc(api, LIST_TOOLS, ann["token"], Host="api.example.com",
                      Origin="https://evil.example")).status == 403


@pytest.mark.parametrize("config", [{"mcp": {"allowed_hosts": ["*"]}}], indirect=True)
async def test_a_star_turns_the_host_check_off(api, mcp_endpoint, ann):
    assert (await rpc(api, LIST_TOOLS, ann["token"], Host="anything.example")).status == 200


# -- limits and protocol errors stay JSON -----------------------------------------------------------------
@pytest.mark.parametrize("config", [{"server": {"max_body_bytes": 512}}], indirect=True)
async def test_a_body_over_the_limit_is_413(api, mcp_endpoint, ann):
    response = await rpc(api, call_tool("tags-store-tool", {"name": "x" * 600}), ann["token"])
    assert (response.status, response.json) == (413, {"message": "The request body is too large."})


async def test_a_wrong_content_type_is_a_json_error(api, mcp_endpoint, ann):
    response = await api.request("POST", "/mcp", body=json.dumps(LIST_TOOLS), token=ann["token"],
                                 headers={"Content-Type": "text/plain", "Accept": JSON_RPC["Accept"]})
    assert (response.status, response.json) == (400, {"message": "Invalid Content-Type header"})


async def test_other_methods_are_405(api, mcp_endpoint, ann):
    response = await api.request("PUT", "/mcp", body=b"{}", token=ann["token"])
    assert (response.status, response.json) == (405, {"message": "Method not allowed."})
    assert response.headers["Allow"] == "POST"


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_on_the_stateless_endpoint_are_405_at_once(api, mcp_endpoint, ann, method):
    # No session: no stream for GET to open (it used to be held open for nothing), none for DELETE to end.
    started = asyncio.get_running_loop().time()
    response = await api.request(method, "/mcp", token=ann["token"], headers={"Accept": "text/event-stream"})
    assert (response.status, response.json) == (405, {"message": "Method not allowed."})
    assert response.headers["Allow"] == "POST"
    assert asyncio.get_running_loop().time() - started < 5
    assert mcp_endpoint._task is None  # answered without the SDK


@pytest.mark.parametrize("body, message", [
    (b'{"jsonrpc": "2.0", "id": 1, "method": ', "Parse error: the request body is not valid JSON."),
    (b'{"jsonrpc": "2.0", "id": 1}', "Validation error: the request body is not a valid JSON-RPC message."),
    (b'[{"jsonrpc": "1.0"}]', "Validation error: the request body is not a valid JSON-RPC message."),
])
async def test_protocol_errors_carry_fixed_texts(api, mcp_endpoint, ann, body, message):
    response = await api.request("POST", "/mcp", body=body, token=ann["token"], headers=JSON_RPC)
    # Not the parser's position nor pydantic's text and its documentation URL.
    assert (response.status, response.json["error"]) == (400, {"code": response.json["error"]["code"],
                                                               "message": message})
    assert response.headers["Server"] == "restify"


# -- the session manager's life ----------------------------------------------------------------------------
async def test_the_manager_starts_on_the_first_request_and_is_reused(api, mcp_endpoint, ann):
    assert mcp_endpoint._task is None
    await rpc(api, LIST_TOOLS, ann["token"])
    first = await mcp_endpoint.manager()
    await rpc(api, LIST_TOOLS, ann["token"])
    assert await mcp_endpoint.manager() is first
    assert [t for t in asyncio.all_tasks() if t.get_name() == "restify-mcp"] == [mcp_endpoint._task]


async def test_after_close_requests_get_503_and_no_task_is_left(api, mcp_endpoint, ann):
    assert (await rpc(api, LIST_TOOLS, ann["token"])).status == 200
    await mcp_endpoint.close()
    assert mcp_endpoint._task.done()
    assert [t for t in asyncio.all_tasks() if t.get_name() == "restify-mcp"] == []
    response = await rpc(api, LIST_TOOLS, ann["token"])
    assert (response.status, response.json) == (503, {"message": "The MCP endpoint is not available."})
