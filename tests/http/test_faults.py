"""The database goes away mid-run: requests fail fast with 503, nothing is reported as
written, and the service recovers by itself when the database is back."""
import asyncio
import logging
import os
import time

import pytest
from pymongo import monitoring
from pymongo.server_type import SERVER_TYPE

from storage import EmbeddedServer, Filter, connect

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="stops its own embedded server")
UNAVAILABLE = {"message": "The database is unavailable."}
TIMEOUT_MS = 2000  # database.timeout_ms, the documented default: a shorter one can fail calls of a busy machine
# Failing fast is answering within the database's timeout, a busy machine adding some; the driver alone
# would wait 30 s for a server before giving up.
FAILS_WITHIN = 10.0
SEEN_WITHIN = 60.0  # seconds for the driver to find a restarted server (it looks every half second here)


class Sighting(monitoring.ServerListener):
    """Whether the driver knows the server: it marks it unknown when it cannot reach it, and known
    again once it has found it."""

    def __init__(self) -> None:
        self.known = False

    def opened(self, event: monitoring.ServerOpeningEvent) -> None:
        pass

    def description_changed(self, event: monitoring.ServerDescriptionChangedEvent) -> None:
        self.known = event.new_description.server_type != SERVER_TYPE.Unknown

    def closed(self, event: monitoring.ServerClosedEvent) -> None:
        pass

    async def again(self) -> None:
        give_up = time.monotonic() + SEEN_WITHIN
        while not self.known:
            assert time.monotonic() < give_up, "the driver did not find the restarted server"
            await asyncio.sleep(0.05)


@pytest.fixture
def sighting():
    return Sighting()


@pytest.fixture
def server(tmp_path):
    embedded = EmbeddedServer(tmp_path / "db").start()
    yield embedded
    embedded.stop()


@pytest.fixture
def db(io_loop, server, sighting):
    """This test's own server and a short timeout; the app fixtures of conftest build on it."""
    database = connect(f"{server.uri}/?heartbeatFrequencyMS=500", "faults", [sighting], timeout_ms=TIMEOUT_MS)
    yield database
    database.close()


async def test_requests_fail_fast_with_503_and_recover(api, server, db, sighting):
    user = await api.register("Ann")
    assert (await api.post("/api/restify/posts", {"title": "before"}, token=user["token"])).status == 201
    server.stop()
    for method, path, body in [("GET", "/api/restify/posts", None), ("POST", "/api/restify/posts", {"title": "lost"}),
                               ("GET", "/api/restify/profile", None)]:
        started = time.monotonic()
        response = await api.request(method, path, body, token=user["token"])
        assert (response.status, response.json) == (503, UNAVAILABLE)
        assert time.monotonic() - started < FAILS_WITHIN
    graphql = await api.post("/graphql", {"query": "{ postList { title } }"})
    assert graphql.status == 200
    assert graphql.json["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
    server.start()
    # Back by itself: once the driver has found the server again (within its next look, not within
    # one request's 2 s, which a busy machine may spend on reconnecting), requests are served.
    await sighting.again()
    recovered = await api.get("/api/restify/posts")
    assert recovered.status == 200
    assert [p["attributes"]["title"] for p in recovered.json["data"]] == ["before"]
    assert await db.collection("posts").count(Filter(equals={"title": "lost"})) == 0


async def test_an_unreachable_database_is_one_warning_per_request_never_a_traceback(api, server, caplog):
    server.stop()
    with caplog.at_level(logging.WARNING):
        response = await api.get("/api/restify/posts")
    assert (response.status, response.json) == (503, UNAVAILABLE)
    logged = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records if r.name != "restify.access"]
    assert logged == [("WARNING", "database unavailable")]
