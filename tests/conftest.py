"""Fixtures, from the bottom up: embedded server -> database -> core -> app -> client -> users.

The embedded nx-27017 server starts once per session; each test gets its own
database, so tests never see each other's records. Set MONGODB_URI to run the
same suite against a real MongoDB, and RESTIFY_DATABASE_PROFILE=mongodb to send
MongoDB's query shapes to the embedded server (tests/servers.py).
"""
import json
import math
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import service.core.identity.ratelimit
import storage.counters
from service.config import Settings
from service.console.application import make_app
from service.core.declarations.app import Restify
from service.core.declarations.registry import load_app
from storage import EmbeddedServer, connect
from tests.commands import CommandCounter
from tests.servers import EMBEDDED_SHAPES, MONGODB_SHAPES_ON_EMBEDDED, PROFILE

ROOT = Path(__file__).resolve().parent.parent
FAST_HASHING = {"argon2_time_cost": 1, "argon2_memory_kib": 1024}
# Seconds the test client waits for one answer (Tornado's default is 20). It bounds a hang, not a speed:
# on a machine whose cores are taken by other work a plain request can take seconds, and requests sent
# past the client's 10 at a time wait their turn within the same bound.
REQUEST_TIMEOUT = 120.0
# The bound on each database call of the tests and of the service they run (database.timeout_ms, 2 s by
# default). On a machine whose cores are taken by other work a new client's first call, which finds the
# server, or a GridFS upload can take longer, and the service then answers 503. Tests of a database that
# does not answer set their own.
DATABASE_TIMEOUT_MS = 30_000


def pytest_runtest_setup(item):
    """The profile's skips (tests/servers.py): each says why, from its marker."""
    for name, skipped, sent in (("embedded_shapes", not EMBEDDED_SHAPES, "MongoDB's shapes are sent"),
                                ("embedded_cannot", MONGODB_SHAPES_ON_EMBEDDED,
                                 "MongoDB's shapes are sent to the embedded server")):
        marker = item.get_closest_marker(name)
        if marker is not None and skipped:
            pytest.skip(f"{sent} (database.profile {PROFILE}): {marker.args[0] if marker.args else name}")


@pytest.fixture(scope="session")
def mongodb_uri(tmp_path_factory):
    if os.environ.get("MONGODB_URI"):
        yield os.environ["MONGODB_URI"]
        return
    server = EmbeddedServer(tmp_path_factory.mktemp("nx-27017")).start()
    yield server.uri
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def _drop_test_databases(mongodb_uri):
    """The tests' databases, dropped from a server given by MONGODB_URI (it outlives the run). The
    embedded server this session started keeps its files in pytest's temp dir, which pytest rotates:
    dropping its hundreds of databases one by one took each worker 10-14 s at the end."""
    yield
    if not os.environ.get("MONGODB_URI"):
        return
    import pymongo
    client = pymongo.MongoClient(mongodb_uri, serverSelectionTimeoutMS=30_000)
    try:
        for name in client.list_database_names():
            if name.startswith("t_"):
                client.drop_database(name)
    except Exception:
        pass
    finally:
        client.close()


class _ShiftedClock:
    """The `time` module, with `time()` running `shift` seconds ahead."""

    def __init__(self, shift: float) -> None:
        self.shift = shift

    def time(self) -> float:
        return time.time() + self.shift

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture(autouse=True)
def throttle_windows_start_with_the_test(monkeypatch):
    """Throttle windows are fixed slices of the clock (a minute for logins, an hour for registrations):
    a test that counts attempts up to a limit fails when a window ends in its middle, which a slow run
    makes likely. The throttles' clock is set so that each test starts a second into an hour."""
    now = time.time()
    clock = _ShiftedClock((math.floor(now / 3600) + 1) * 3600 + 1 - now)
    monkeypatch.setattr(storage.counters, "time", clock)
    monkeypatch.setattr(service.core.identity.ratelimit, "time", clock)


@pytest.fixture
def db_name():
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def config(tmp_path):
    """Settings overrides for this test: change them before `restify` is built."""
    # Tests register many users from 127.0.0.1 in one database; the registration throttle's own
    # tests (tests/http/test_throttle.py) set their limits.
    return {"auth": {**FAST_HASHING, "registrations_per_address": 10_000}, "files": {"root": str(tmp_path / "storage")},
            "database": {"profile": PROFILE}}


@pytest.fixture
def commands():
    return CommandCounter()


@pytest.fixture
def db(io_loop, mongodb_uri, db_name, commands):
    database = connect(mongodb_uri, db_name, listeners=[commands], profile=PROFILE, timeout_ms=DATABASE_TIMEOUT_MS)
    yield database
    database.close()


@pytest.fixture
def registry():
    return load_app(ROOT)


@pytest.fixture
def restify(db, config, registry):
    settings = Settings(config, app_dir=ROOT)
    # An expensive query's rests (service/core/reading/admission.py) last as long as it took: a test's next search
    # could be refused or not depending on the machine's speed. Their own tests set them.
    for key, off in (("expensive_rest", 0), ("expensive_share", 1)):
        if key not in config.get("query", {}):
            settings.set("query", key, off)
    # Tests write as fast as they can; the pace of writes (service/core/identity/pacing.py) has tests of its own.
    if "writes_per_minute" not in config.get("throttle", {}):
        settings.set("throttle", "writes_per_minute", 0)
    return Restify(settings, registry, db)


@pytest.fixture
def app(restify):
    return make_app(restify)


@dataclass
class Response:
    status: int
    body: bytes
    headers: Any

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Api:
    """A thin JSON client over the test server."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def request(self, method: str, path: str, json_body: Any = None, token: str | None = None,
                      body: bytes | str | None = None, headers: dict[str, str] | None = None) -> Response:
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        if json_body is not None:
            body = json.dumps(json_body)
            sent.setdefault("Content-Type", "application/json")
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        result = await self.client.fetch(path, method=method, body=body, headers=sent, raise_error=False,
                                         allow_nonstandard_methods=True, request_timeout=REQUEST_TIMEOUT,
                                         connect_timeout=REQUEST_TIMEOUT)
        return Response(result.code, result.body or b"", result.headers)

    async def get(self, path: str, **kw: Any) -> Response:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, json_body: Any = None, **kw: Any) -> Response:
        return await self.request("POST", path, json_body, **kw)

    async def put(self, path: str, json_body: Any = None, **kw: Any) -> Response:
        return await self.request("PUT", path, json_body, **kw)

    async def patch(self, path: str, json_body: Any = None, **kw: Any) -> Response:
        return await self.request("PATCH", path, json_body, **kw)

    async def delete(self, path: str, **kw: Any) -> Response:
        return await self.request("DELETE", path, **kw)

    async def register(self, name: str = "Ann", email: str | None = None, password: str = "secret-pass") -> dict:
        """Registers a user; returns {"id", "token", "email"}."""
        email = email or f"{name.lower()}.{uuid.uuid4().hex[:6]}@example.com"
        response = await self.post("/api/register", {"name": name, "email": email, "password": password,
                                                     "password_confirmation": password})
        assert response.status == 201, response.body
        data = response.json
        return {"id": data["id"], "token": data["meta"]["token"], "email": email}


@pytest.fixture
def api(app, http_server_client):
    # `app` is requested by name so parametrized settings reach the server (it looks `app` up lazily).
    return Api(http_server_client)


@pytest.fixture
def database_env(mongodb_uri):
    """Environment for a `restify` process on this session's database server, in a database of its own."""
    return {"MONGODB_URI": mongodb_uri, "RESTIFY_DATABASE_NAME": f"t_{uuid.uuid4().hex[:12]}",
            "RESTIFY_DATABASE_PROFILE": PROFILE, "RESTIFY_DATABASE_TIMEOUT_MS": str(DATABASE_TIMEOUT_MS),
            "RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024"}


@pytest.fixture
def app_copy(tmp_path):
    """A copy of the demo application to edit or break."""
    shutil.copytree(ROOT / "repositories", tmp_path / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.fixture
def ann(api, io_loop):
    """A registered user: {"id", "token", "email"}."""
    return io_loop.run_sync(lambda: api.register("Ann"))


@pytest.fixture
def bob(api, io_loop):
    """Another registered user."""
    return io_loop.run_sync(lambda: api.register("Bob"))
