"""The `restify` command, run as a real process."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from storage.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]
FAST = {"RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024"}


def restify(*args: str, env: dict[str, str] | None = None, app_dir: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "service.cli", "--app-dir", str(app_dir), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, **(env or {})})


@pytest.fixture
def database_env(mongodb_uri):
    return {"MONGODB_URI": mongodb_uri, "RESTIFY_DATABASE_NAME": f"t_{uuid.uuid4().hex[:12]}", **FAST}


@pytest.fixture
def app_copy(tmp_path):
    shutil.copytree(ROOT / "repositories", tmp_path / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def request(port: int, method: str, path: str, body: dict | None = None, token: str | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
               **(headers or {})}
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers,
                                                           method=method), timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else {}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class Server:
    def __init__(self, app_dir: Path, env: dict[str, str], *extra: str, log_dir: Path | None = None) -> None:
        self.port = free_port()
        self.log = ((log_dir or app_dir) / f"serve-{self.port}.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port), "--app-dir", str(app_dir), *extra],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **env})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.poll() is None, Path(self.log.name).read_text()
            try:
                if request(self.port, "GET", "/api/restify/tags")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("server did not start: " + Path(self.log.name).read_text())

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self.log.close()
        return code


def test_repository_command_writes_a_repository_bound_by_name(app_copy):
    result = restify("repository", "BlogPostRepository", app_dir=app_copy)
    assert result.returncode == 0, result.stderr
    written = app_copy / "repositories" / "blog_post.py"
    assert "class BlogPostRepository(Repository):" in written.read_text()
    assert "class BlogPost(Model):" in (app_copy / "repositories" / "models.py").read_text()
    assert result.stdout.splitlines()[0] == f"Created {written}"
    again = restify("repository", "BlogPostRepository", app_dir=app_copy)
    assert again.returncode == 2 and "already exists; not overwriting it" in again.stderr
    from service.core.registry import load_app
    assert load_app(app_copy).get("blog_posts") is not None


@pytest.mark.parametrize("name", ["blogpost", "Blog", "Repository", "../EvilRepository"])
def test_repository_command_refuses_bad_names(app_copy, name):
    result = restify("repository", name, app_dir=app_copy)
    assert result.returncode == 2
    assert "is not a repository class name like PostRepository" in result.stderr


def test_seed_then_token_create_and_revoke(database_env):
    seeded = restify("seed", "--users", "3", "--posts", "10", "--comments", "20", env=database_env)
    assert seeded.returncode == 0, seeded.stderr
    assert seeded.stdout.startswith("Seeded 3 users, 10 posts, 20 comments, 10 tags")
    import pymongo
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    try:
        email = client[database_env["RESTIFY_DATABASE_NAME"]].users.find_one()["email"]
    finally:
        client.close()
    token = restify("token:create", email, env=database_env)
    assert token.returncode == 0, token.stderr
    token_id, _, secret = token.stdout.strip().partition("|")
    assert len(token_id) == 24 and len(secret) > 30
    revoked = restify("token:revoke", email, env=database_env)
    assert revoked.stdout.strip() == f"Revoked 1 token(s) of {email}"
    missing = restify("token:create", "nobody@example.com", env=database_env)
    assert missing.returncode == 2 and "no user with email 'nobody@example.com'" in missing.stderr


def test_serve_answers_http_and_stops_cleanly(database_env, tmp_path):
    server = Server(ROOT, database_env, log_dir=tmp_path)
    status, body = request(server.port, "GET", "/api/restify/posts")
    assert status == 200 and body["meta"]["per_page"] == 15
    assert server.stop() == 0


def test_serve_starts_the_embedded_database_and_keeps_data_across_restarts(app_copy):
    env = {**FAST, "MONGODB_URI": ""}  # empty: the service starts its own embedded database
    server = Server(app_copy, env)
    status, _ = request(server.port, "POST", "/api/register", {"name": "Ann", "email": "ann@example.com",
                                                               "password": "secret-pass",
                                                               "password_confirmation": "secret-pass"})
    assert status == 201
    assert server.stop() == 0
    assert list((app_copy / "var" / "db").glob("*.db"))
    assert not list((app_copy / "var" / "db").glob("*.pid"))  # the embedded server stopped with the service
    again = Server(app_copy, env)
    status, body = request(again.port, "POST", "/api/login", {"email": "ann@example.com", "password": "secret-pass"})
    assert status == 200 and body["attributes"]["name"] == "Ann"
    assert again.stop() == 0


def test_a_broken_declaration_stops_start_up_with_a_clear_message(app_copy, database_env):
    module = app_copy / "repositories" / "tags.py"
    module.write_text(module.read_text().replace('"max:50"', '"maximum:50"'))
    result = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--app-dir", str(app_copy)],
                            capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, **database_env})
    assert result.returncode == 2
    assert "restify: broken declaration: TagRepository: field 'name': unknown rule 'maximum:50'" in result.stderr
