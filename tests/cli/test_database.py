"""The database as `restify` processes see it: the one MONGODB_URI names, and a stalled one
answered with 503 in time. Each test runs its own embedded server (one is paused here)."""
import os
import time

import pymongo
import pytest

from storage import EmbeddedServer
from tests.processes import FAST, ROOT, Server, register, request, restify

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="runs its own embedded server")
UNAVAILABLE = {"message": "The database is unavailable."}
TIMEOUT_MS = 2000  # database.timeout_ms, the documented default: the test runs with it


@pytest.fixture
def database(tmp_path):
    with EmbeddedServer(tmp_path / "db") as server:
        yield server


def collections_with_records(uri: str) -> dict[str, list[str]]:
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=30_000)
    try:
        return {name: sorted(c for c in client[name].list_collection_names() if client[name][c].find_one())
                for name in client.list_database_names() if name not in ("admin", "config", "local")}
    finally:
        client.close()


def test_the_database_named_in_the_uri_is_used(database):
    seeded = restify("seed", "--scale", "0.01",
                     env={**FAST, "MONGODB_URI": f"{database.uri}/mydb"})
    assert seeded.returncode == 0, seeded.stderr
    assert collections_with_records(database.uri) == {"mydb": ["comments", "posts", "tags", "users"]}


def test_database_name_applies_when_the_uri_names_none(database):
    seeded = restify("seed", "--scale", "0.01",
                     env={**FAST, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": "named"})
    assert seeded.returncode == 0, seeded.stderr
    assert collections_with_records(database.uri) == {"named": ["comments", "posts", "tags", "users"]}


def timed(port: int, method: str, path: str, body: dict | None = None, token: str | None = None
          ) -> tuple[int, dict, float]:
    started = time.monotonic()
    status, answer = request(port, method, path, body, token)
    return status, answer, time.monotonic() - started


def test_a_stopped_database_answers_503_in_time_and_the_service_recovers(database, tmp_path):
    server = Server(ROOT, {**FAST, "MONGODB_URI": f"{database.uri}/stall"}, log_dir=tmp_path)
    try:
        token = register(server.port)
        status, post = request(server.port, "POST", "/api/restify/posts", {"title": "before"}, token)
        assert status == 201, post
        database.pause()
        try:
            answers = [timed(server.port, method, path, body, token) for method, path, body in [
                ("GET", "/api/restify/posts", None),
                ("GET", f"/api/restify/posts/{post['data']['id']}", None),
                ("GET", "/api/restify/profile", None),
                ("POST", "/api/restify/posts", {"title": "during"}),
            ]]
            graphql = timed(server.port, "POST", "/graphql", {"query": "{ postList { title } }"})
        finally:
            database.resume()
        # In time: the database's timeout, a busy machine adding some; a driver without one waits on the
        # paused server until the client gives up (REQUEST_WAIT).
        bound = TIMEOUT_MS / 1000 + 8
        assert [(status, body) for status, body, _ in answers] == [(503, UNAVAILABLE)] * 4
        assert max(seconds for _, _, seconds in answers) < bound, answers
        assert graphql[0] == 200 and graphql[1]["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
        assert graphql[2] < bound
        # Back by itself: the very next request is served. (A write that timed out may still have
        # been applied by the server once it ran again: a 503 says "unknown", not "not written".)
        status, listed = request(server.port, "GET", "/api/restify/posts")
        assert status == 200
        assert "before" in [p["attributes"]["title"] for p in listed["data"]]
    finally:
        assert server.stop() == 0
