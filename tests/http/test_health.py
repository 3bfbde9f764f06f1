"""`/healthz` (the process answers) and `/readyz` (the database answers, else 503)."""
import time

import pytest

from storage import EmbeddedServer, connect


async def test_healthz_answers_while_the_process_runs(api):
    response = await api.get("/healthz")
    assert response.status == 200
    assert response.json == {"status": "ok"}


async def test_readyz_answers_when_the_database_does(api):
    response = await api.get("/readyz")
    assert response.status == 200
    assert response.json == {"status": "ready"}


async def test_health_routes_ignore_a_bearer_token(api):
    """A probe configured with some header must not be turned away as a bad user token."""
    for path in ("/healthz", "/readyz"):
        assert (await api.get(path, token="1|not-a-token")).status == 200


class TestWithTheDatabaseGone:
    """Its own database server, stopped in the test (the session's server stays up for the others)."""

    @pytest.fixture
    def own_server(self, tmp_path):
        server = EmbeddedServer(tmp_path / "db").start()
        yield server
        server.stop()

    @pytest.fixture
    def db(self, io_loop, own_server, db_name):
        database = connect(own_server.uri, db_name, timeout_ms=500)
        yield database
        database.close()

    async def test_readyz_is_503_and_healthz_200_while_the_database_is_down(self, api, own_server):
        assert (await api.get("/readyz")).status == 200
        own_server.stop()
        started = time.monotonic()
        response = await api.get("/readyz")
        elapsed = time.monotonic() - started
        assert response.status == 503
        assert response.json == {"message": "The database does not answer."}
        assert elapsed < 5.0  # bounded: a probe gives up after READY_TIMEOUT (1 s), not the driver's own wait
        health = await api.get("/healthz")
        assert (health.status, health.json) == (200, {"status": "ok"})
