"""The server layer without HTTP: argument conversion, an unreachable database, the SDK's in-process client."""
import socket

from mcp import Client

from service.config import Settings
from service.core.declarations.app import Restify
from service.mcp.server import Caller, build_server, query_params
from storage.client import Database


def test_arguments_become_query_string_values():
    assert query_params({"published": True, "perPage": 2.0, "page": 3, "include": ["user", "tags"],
                         "search": None, "user_id": None, "views": 1.5, "sort": "-views"}) == {
        "published": "true", "perPage": "2", "page": "3", "include": "user,tags", "user_id": "null",
        "views": "1.5", "sort": "-views"}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the socket is closed


async def test_an_unreachable_database_is_the_503_body(io_loop, config, registry):
    db = Database(f"mongodb://127.0.0.1:{_closed_port()}", "unreachable", timeout_ms=200)
    app = Restify(Settings(config), registry, db)

    async def guest(ctx):
        return Caller(None)

    try:
        async with Client(build_server(app, guest), mode="legacy") as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("posts-index-tool", {})
    finally:
        db.close()
    assert "posts-index-tool" in listed  # listing needs no database
    assert result.is_error
    assert result.structured_content == {"message": "The database is unavailable."}


async def test_a_guest_caller_is_held_to_the_policies(config, registry, db):
    app = Restify(Settings(config), registry, db)

    async def guest(ctx):
        return Caller(None)

    async with Client(build_server(app, guest), mode="legacy") as client:
        listed = await client.call_tool("posts-index-tool", {})
        stored = await client.call_tool("posts-store-tool", {"title": "x"})
    assert not listed.is_error and listed.structured_content["data"] == []
    assert stored.is_error and stored.structured_content == {"message": "Unauthenticated."}
