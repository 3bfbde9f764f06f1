"""`restify new DIR`: a runnable application of one's own, served, extended and smoke-tested."""
import os
import subprocess
import sys

import pytest

from service.config import load_settings
from tests.processes import RUN_WAIT, Server, request, restify

FILES = [".gitignore", "Procfile", "README.md", "repositories/__init__.py", "repositories/models.py",
         "repositories/policies.py", "repositories/seeders.py", "repositories/users.py", "requirements-dev.txt",
         "restify.toml", "tests/test_smoke.py"]


@pytest.fixture
def new_app(tmp_path):
    directory = tmp_path / "blog"
    result = restify("new", str(directory))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert result.stdout.splitlines()[0] == f"Created {directory}: " + ", ".join(FILES)
    return directory


def test_new_writes_the_application_files(new_app):
    assert sorted(str(p.relative_to(new_app)) for p in new_app.rglob("*") if p.is_file()) == sorted(FILES)
    procfile = (new_app / "Procfile").read_text()
    assert procfile == "web: restify serve --host 0.0.0.0 --port $PORT\nworker: restify watch\n"
    assert "var/" in (new_app / ".gitignore").read_text().splitlines()
    assert (new_app / "README.md").read_text().startswith("# blog\n")
    settings = load_settings(new_app, environ={})
    assert (settings.get("mail", "url"), settings.get("mail", "from")) == ("log", "blog <noreply@localhost>")
    assert (settings.get("auth", "verify_email"), settings.get("auth", "require_verified")) == (False, False)


def test_the_new_application_says_how_to_install_what_its_tests_need(new_app, tmp_path):
    # `python -m pytest` in a fresh environment has no pytest: one command installs it, and both the
    # README and the smoke test say which.
    install = "python -m pip install -r requirements-dev.txt"
    requirements = (new_app / "requirements-dev.txt").read_text().splitlines()
    assert [line for line in requirements if line and not line.startswith("#")] == ["pytest>=8,<10"]
    assert install in (new_app / "README.md").read_text()
    assert install in (new_app / "tests" / "test_smoke.py").read_text()
    result = restify("new", str(tmp_path / "other"))
    assert result.stdout.splitlines()[1] == (f"Next: cd {tmp_path / 'other'} && restify serve   (then `{install}` "
                                             "once, and `python -m pytest` runs its smoke test)")


def test_the_new_application_serves_register_login_profile_and_a_new_repository(new_app, database_env):
    added = restify("repository", "NoteRepository", app_dir=new_app)
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines()[-2] == (f"Added NotePolicy to {new_app / 'repositories' / 'policies.py'}: anyone "
                                             "reads, logged-in users store, nobody updates or deletes yet")
    server = Server(new_app, database_env, probe="/api/restify/notes")
    try:
        ann = {"name": "Ann", "email": "ann@example.com", "password": "secret-pass",
               "password_confirmation": "secret-pass"}
        status, user = request(server.port, "POST", "/api/register", ann)
        assert status == 201, user
        taken = request(server.port, "POST", "/api/register", ann)
        assert taken == (422, {"message": "The given data was invalid.",
                               "errors": {"email": ["The email has already been taken."]}})
        unconfirmed = request(server.port, "POST", "/api/register", {
            "name": "Bob", "email": "bob@example.com", "password": "secret-pass"})
        assert unconfirmed[0] == 422 and list(unconfirmed[1]["errors"]) == ["password"]
        status, login = request(server.port, "POST", "/api/login", {"email": "ann@example.com",
                                                                     "password": "secret-pass"})
        assert status == 200, login
        token = login["meta"]["token"]
        status, profile = request(server.port, "GET", "/api/restify/profile", token=token)
        assert status == 200 and profile["attributes"] == {
            "name": "Ann", "email": "ann@example.com", "created_at": profile["attributes"]["created_at"],
            "updated_at": profile["attributes"]["updated_at"]}
        status, note = request(server.port, "POST", "/api/restify/notes", {"name": "first"}, token=token)
        assert status == 201 and note["data"]["attributes"]["name"] == "first"
        assert request(server.port, "POST", "/api/restify/notes", {"name": "guest"})[0] == 401
        status, notes = request(server.port, "GET", "/api/restify/notes")
        assert status == 200 and [n["attributes"]["name"] for n in notes["data"]] == ["first"]
    finally:
        assert server.stop() == 0


def test_the_new_application_seeds_its_test_user(new_app, database_env):
    result = restify("seed", app_dir=new_app, env=database_env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "Seeded 1 users.\n", "")


def test_the_new_applications_smoke_test_passes_on_its_own_embedded_database(new_app):
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=new_app,
                            capture_output=True, text=True, timeout=2 * RUN_WAIT,
                            env={**env, "RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_new_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    result = restify("new", str(tmp_path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"restify: {tmp_path} is not empty; `restify new` writes only into a new or empty "
                             "directory\n")
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
