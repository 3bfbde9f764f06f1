"""`restify mcp` when the database goes away: tools answer the REST body, never the driver's own text."""
import os

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from storage import EmbeddedServer, connect
from tests.conftest import ROOT
from tests.mcp.conftest import error, ok
from tests.mcp.test_stdio import command

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="stops its own embedded server")
UNAVAILABLE = {"message": "The database is unavailable."}


@pytest.fixture
def server(tmp_path):
    embedded = EmbeddedServer(tmp_path / "db").start()
    yield embedded
    embedded.stop()


@pytest.fixture
def db(io_loop, server):
    """This test's own server, which it stops; the app fixtures of conftest build on it."""
    database = connect(server.uri, "faults", timeout_ms=500)
    yield database
    database.close()


async def test_a_stopped_database_is_a_fixed_text_over_stdio(api, server, db):
    user = await api.register("Ann")
    executable, args, env = command(server.uri, "faults", user["token"])
    env["RESTIFY_DATABASE_TIMEOUT_MS"] = "500"
    parameters = StdioServerParameters(command=executable, args=args, env=env, cwd=str(ROOT))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert ok(await session.call_tool("posts-index-tool", {}))["data"] == []
        server.stop()
        assert error(await session.call_tool("posts-index-tool", {})) == UNAVAILABLE
        with pytest.raises(MCPError) as refused:
            await session.list_tools()
    assert refused.value.error.message == UNAVAILABLE["message"]
