"""`restify mcp`: the MCP server over stdin/stdout, for agents that launch it as a subprocess.

The token comes from RESTIFY_TOKEN (`restify token:create EMAIL` prints one). It is checked
at start-up, so a wrong one fails at once with a message, and again at every call, so a
revoked token stops working as it would over HTTP. stdout carries only protocol messages.
"""
import asyncio
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from service.core.declarations.app import Restify
from service.core.kernel.answers import is_unavailable
from service.core.kernel.errors import Unauthenticated
from service.core.operations import auth
from service.mcp.server import Caller, build_server

TOKEN_VARIABLE = "RESTIFY_TOKEN"


async def serve_stdio(make_app: Callable[[], Restify], token: str) -> None:
    """Serves until stdin closes; raises Unauthenticated when the token is not valid at start-up.

    The app is made here, inside the running loop, because its Motor client binds to the
    loop that is current when it is created.
    """
    app = make_app()

    async def caller(ctx: ServerRequestContext[Any, Any]) -> Caller:
        return Caller(await auth.authenticate(app, token))

    server = build_server(app, caller)
    try:
        await auth.authenticate(app, token)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        app.db.close()


def run_stdio(make_app: Callable[[], Restify], environ: Mapping[str, str] | None = None) -> int:
    """The `restify mcp` command; returns the exit code."""
    token = (os.environ if environ is None else environ).get(TOKEN_VARIABLE, "").strip()
    if not token:
        print(f"restify mcp: set {TOKEN_VARIABLE} to a bearer token (restify token:create EMAIL prints one)",
              file=sys.stderr)
        return 2
    try:
        asyncio.run(serve_stdio(make_app, token))
    except Unauthenticated:
        print(f"restify mcp: {TOKEN_VARIABLE} is not a valid token", file=sys.stderr)
        return 2
    except Exception as error:
        if not is_unavailable(error):
            raise
        print(f"restify mcp: the database is unavailable: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
