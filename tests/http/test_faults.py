"""The database goes away mid-run: requests fail fast with 503, nothing is reported as
written, and the service recovers by itself when the database is back."""
import logging
import os
import time

import pytest

from storage import EmbeddedServer, Filter, connect

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="stops its own embedded server")
UNAVAILABLE = {"message": "The database is unavailable."}


@pytest.fixture
def server(tmp_path):
    embedded = EmbeddedServer(tmp_path / "db").start()
    yield embedded
    embedded.stop()


@pytest.fixture
def db(io_loop, server):
    """This test's own server and a short timeout; the app fixtures of conftest build on it."""
    database = connect(server.uri, "faults", timeout_ms=500)
    yield database
    database.close()


async def test_requests_fail_fast_with_503_and_recover(api, server, db):
    user = await api.register("Ann")
    assert (await api.post("/api/restify/posts", {"title": "before"}, token=user["token"])).status == 201
    server.stop()
    for method, path, body in [("GET", "/api/restify/posts", None), ("POST", "/api/restify/posts", {"title": "lost"}),
                               ("GET", "/api/restify/profile", None)]:
        started = time.monotonic()
        response = await api.request(method, path, body, token=user["token"])
        assert (response.status, response.json) == (503, UNAVAILABLE)
        assert time.monotonic() - started < 3
    graphql = await api.post("/graphql", {"query": "{ postList { title } }"})
    assert graphql.status == 200
    assert graphql.json["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
    server.start()
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
