"""`restify mcp` when the database goes away: tools answer the REST body, never the driver's own text."""
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.conftest import ROOT
# This test's own database server, which it stops, and the app fixtures of conftest built on it.
from tests.http.test_faults import TIMEOUT_MS, UNAVAILABLE, db, pytestmark, server, sighting  # noqa: F401
from tests.mcp.conftest import error, ok
from tests.mcp.test_stdio import command


async def test_a_stopped_database_is_a_fixed_text_over_stdio(api, server, db):
    user = await api.register("Ann")
    executable, args, env = command(server.uri, "faults", user["token"])
    env["RESTIFY_DATABASE_TIMEOUT_MS"] = str(TIMEOUT_MS)
    parameters = StdioServerParameters(command=executable, args=args, env=env, cwd=str(ROOT))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert ok(await session.call_tool("posts-index-tool", {}))["data"] == []
        server.stop()
        assert error(await session.call_tool("posts-index-tool", {})) == UNAVAILABLE
        with pytest.raises(MCPError) as refused:
            await session.list_tools()
    assert refused.value.error.message == UNAVAILABLE["message"]
