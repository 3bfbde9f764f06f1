"""A real `restify serve` process for the fuzz tests, on a free port, against the session's
embedded database (its own database name), with fast password hashing; and a logged-in user."""
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import pytest
import requests
from _pytest.nodeid import NodeId

from storage.embedded import free_port
from tests.conftest import DATABASE_TIMEOUT_MS, ROOT
from tests.processes import REQUEST_WAIT, START_WAIT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Schemathesis names each operation's test `<function>[<operation>]` but gives them all the node id
    of the function; a node id of their own lets a scheduler (pytest-xdist) and a report tell them apart."""
    for item in items:
        if "[" in item.name and not item.nodeid.endswith("]"):
            item._id = NodeId.parse(f"{item.nodeid}[{item.name.split('[', 1)[1]}")


@dataclass
class Service:
    url: str
    env: dict[str, str]
    session: requests.Session

    def register(self, name: str = "Fuzz") -> dict:
        """A new user; returns {"id", "token", "email", "password"}."""
        email = f"{name.lower()}.{uuid.uuid4().hex[:8]}@example.com"
        password = "secret-pass"
        response = self.session.post(f"{self.url}/api/register", json={
            "name": name, "email": email, "password": password, "password_confirmation": password},
            timeout=REQUEST_WAIT)
        assert response.status_code == 201, response.text
        body = response.json()
        return {"id": body["id"], "token": body["meta"]["token"], "email": email, "password": password}


@pytest.fixture(scope="module")
def service(mongodb_uri, tmp_path_factory):
    """`restify serve` as a subprocess; stopped (SIGTERM, then SIGKILL) when the module is done."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESTIFY_")}
    env.update({
        "MONGODB_URI": mongodb_uri,
        "RESTIFY_DATABASE_NAME": f"t_fuzz_{uuid.uuid4().hex[:10]}",
        "RESTIFY_DATABASE_TIMEOUT_MS": str(DATABASE_TIMEOUT_MS),
        "RESTIFY_AUTH_ARGON2_TIME_COST": "1",
        "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024",
        # The fuzzer registers, and guesses `current_password`, far more than a person (the throttles have
        # their own tests): limits it does not reach, so valid requests still get through.
        "RESTIFY_AUTH_REGISTRATIONS_PER_ADDRESS": "100000",
        "RESTIFY_AUTH_LOGIN_ATTEMPTS_PER_ACCOUNT": "100000",
        "RESTIFY_AUTH_LOGIN_ATTEMPTS_PER_ADDRESS": "100000",
        "RESTIFY_AUTH_RESETS_PER_ACCOUNT": "100000",
        "RESTIFY_AUTH_RESETS_PER_ADDRESS": "100000",
        "RESTIFY_AUTH_RESENDS_PER_ACCOUNT": "100000",
        # Likewise the pace of writes (still on, so the document lists its 429s: tests/http/test_write_pace.py).
        "RESTIFY_THROTTLE_WRITES_PER_MINUTE": "100000000",
        "RESTIFY_THROTTLE_WRITE_BURST": "100000000",
        # Answers that hang on the clock (a rest after an expensive query, lasting T x rest; a total kept for
        # seconds) differ when Hypothesis replays a prefix on a busy machine, which the stateful run reports
        # as a flaky strategy: the fuzzer gets answers that depend on the requests alone. Both have their
        # own tests (tests/http/test_expensive_queries.py, tests/storage/test_counts.py).
        "RESTIFY_QUERY_EXPENSIVE_REST": "0",
        "RESTIFY_QUERY_EXPENSIVE_SHARE": "1",
        "RESTIFY_QUERY_EXPENSIVE_COUNT_SECONDS": "0",
        "RESTIFY_FILES_ROOT": str(tmp_path_factory.mktemp("fuzz-storage")),
        # The session keeps connections for the whole module: on a loaded machine one may sit idle past
        # the default 60 s, and a close racing its reuse resets the next request. Idle limits have their
        # own tests (tests/http/test_connections.py).
        "RESTIFY_SERVER_IDLE_TIMEOUT": "3600",
    })
    log = tmp_path_factory.mktemp("fuzz-log") / "serve.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "--app-dir", str(ROOT), "serve", "--port", str(port)],
            env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    session = requests.Session()
    try:
        _wait_until_serving(process, url, session, log)
        yield Service(url, env, session)
    finally:
        session.close()
        _stop(process)
    unknown = log.read_text(errors="replace").split("Uncaught exception")[1:]
    if unknown:
        pytest.fail(f"the service logged {len(unknown)} unexpected traceback(s); the first:\n{unknown[0][:4000]}")


def _wait_until_serving(process: subprocess.Popen, url: str, session: requests.Session, log) -> None:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"restify serve exited with {process.returncode}:\n{log.read_text()}")
        try:  # the first answer builds the document: on a busy machine that alone can take seconds
            if session.get(f"{url}/api/restify/openapi.json", timeout=REQUEST_WAIT).status_code == 200:
                return
        except requests.ConnectionError:  # not listening yet
            pass
        time.sleep(0.1)
    raise RuntimeError(f"restify serve did not answer within {START_WAIT} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=START_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=START_WAIT)
