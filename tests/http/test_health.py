"""`/healthz` (the process answers) and `/readyz` (the database answers, else 503)."""
import time

import pytest

from service.core.kernel.health import READY_TIMEOUT, Readiness
from storage import EmbeddedServer, connect

# A probe gives up after READY_TIMEOUT (1 s): on a machine whose cores are taken by other work, a ping
# can take that long, and "not ready" is then the right answer. Tests of what a probe answers, not of
# how soon, give it longer.
PATIENT = 60.0
DRIVER_WAIT = 60  # seconds the driver waits for a server before it gives up, where a test sets it


def readiness(app) -> Readiness:
    """The probe behind `/readyz` of this application."""
    return app.wildcard_router.named_rules["/readyz"].target_kwargs["readiness"]


@pytest.fixture
def patient_probe(app):
    readiness(app).timeout = PATIENT


async def test_healthz_answers_while_the_process_runs(api):
    response = await api.get("/healthz")
    assert response.status == 200
    assert response.json == {"status": "ok"}


async def test_readyz_answers_when_the_database_does(api, patient_probe):
    response = await api.get("/readyz")
    assert response.status == 200
    assert response.json == {"status": "ready"}


async def test_health_routes_ignore_a_bearer_token(api, patient_probe):
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
        database = connect(own_server.uri, db_name, timeout_ms=DRIVER_WAIT * 1000)
        yield database
        database.close()

    async def test_readyz_is_503_and_healthz_200_while_the_database_is_down(self, api, app, own_server):
        probe = readiness(app)
        probe.timeout = PATIENT
        assert (await api.get("/readyz")).status == 200
        probe.timeout = READY_TIMEOUT
        own_server.stop()
        started = time.monotonic()
        response = await api.get("/readyz")
        elapsed = time.monotonic() - started
        assert response.status == 503
        assert response.json == {"message": "The database does not answer."}
        # The probe gave up on its own (after 1 s, a busy machine adding some), long before the driver would.
        assert elapsed < DRIVER_WAIT / 2
        health = await api.get("/healthz")
        assert (health.status, health.json) == (200, {"status": "ok"})
