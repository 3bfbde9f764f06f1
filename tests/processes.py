"""Helpers for tests that run the service as a real process and talk to it over HTTP."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from storage.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
FAST = {"RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024"}
# Bounds on waits for a process (seconds). They tell a hang from slow progress, so they are wide: on a
# machine whose cores are taken by other work, starting Python with the service's imports alone can
# take tens of seconds, and one request several.
START_WAIT = 120.0
REQUEST_WAIT = 60.0
RUN_WAIT = 300.0  # one command, from start to exit


def restify(*args: str, env: dict[str, str] | None = None, app_dir: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "service.cli", "--app-dir", str(app_dir), *args],
                          capture_output=True, text=True, timeout=RUN_WAIT, cwd=ROOT, env={**os.environ, **(env or {})})


def request(port: int, method: str, path: str, body: dict | None = None, token: str | None = None,
            headers: dict[str, str] | None = None, host: str = "127.0.0.1") -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
               **(headers or {})}
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}{path}", data, headers,
                                                           method=method), timeout=REQUEST_WAIT) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else {}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def register(port: int, name: str = "Ann", email: str = "ann@example.com", password: str = "secret-pass") -> str:
    """Registers a user on a running server; returns their token."""
    status, user = request(port, "POST", "/api/register", {
        "name": name, "email": email, "password": password, "password_confirmation": password})
    assert status == 201, user
    return user["meta"]["token"]


class Server:
    def __init__(self, app_dir: Path, env: dict[str, str], *extra: str, log_dir: Path | None = None,
                 probe: str = "/api/restify/tags") -> None:
        self.port = free_port()
        self.log = ((log_dir or app_dir) / f"serve-{self.port}.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port), "--app-dir", str(app_dir), *extra],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **env})
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            assert self.process.poll() is None, Path(self.log.name).read_text()
            # Serving is announced once every worker listens; one worker may answer before that.
            try:
                if request(self.port, "GET", probe)[0] == 200 and self.announced:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("server did not start: " + Path(self.log.name).read_text())

    @property
    def announced(self) -> bool:
        return "Restify serving" in Path(self.log.name).read_text()

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=START_WAIT)
        self.log.close()
        return code
