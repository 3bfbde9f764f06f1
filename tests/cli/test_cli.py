"""The `restify` command, run as a real process."""
import os
import subprocess
import sys

import pytest

from tests.processes import FAST, ROOT, RUN_WAIT, Server, request, restify


def test_repository_command_writes_a_repository_bound_by_name(app_copy):
    result = restify("repository", "BlogPostRepository", app_dir=app_copy)
    assert result.returncode == 0, result.stderr
    written = app_copy / "repositories" / "blog_post.py"
    assert "class BlogPostRepository(Repository):" in written.read_text()
    assert "class BlogPost(Model):" in (app_copy / "repositories" / "models.py").read_text()
    assert result.stdout.splitlines()[0] == f"Created {written}"
    assert result.stdout.splitlines()[-1] == (  # a running server does not see it by itself
        "A running `restify serve` answers 404 for it until restarted; `restify serve --watch` (or a "
        "`restify watch` worker beside it, as in the Procfile) serves it without a restart.")
    again = restify("repository", "BlogPostRepository", app_dir=app_copy)
    assert again.returncode == 2 and "already exists; not overwriting it" in again.stderr
    from service.core.declarations.registry import load_app
    assert load_app(app_copy).get("blog_posts") is not None


@pytest.mark.parametrize("name", ["blogpost", "Blog", "Repository", "../EvilRepository"])
def test_repository_command_refuses_bad_names(app_copy, name):
    result = restify("repository", name, app_dir=app_copy)
    assert result.returncode == 2
    assert "is not a repository class name like PostRepository" in result.stderr


def test_seed_then_token_create_and_revoke(database_env):
    seeded = restify("seed", "--scale", "0.15", env=database_env)
    assert seeded.returncode == 0, seeded.stderr
    assert seeded.stdout == "Seeded 90 comments, 30 posts, 10 tags, 3 users.\n"
    import pymongo
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    database = client[database_env["RESTIFY_DATABASE_NAME"]]
    try:
        email = database.users.find_one()["email"]
        token = restify("token:create", email, env=database_env)
        assert token.returncode == 0, token.stderr
        token_id, _, secret = token.stdout.strip().partition("|")
        assert len(token_id) == 24 and len(secret) > 30
        narrow = restify("token:create", email, "--abilities", "posts:read, posts:publish-posts", "--name", "ci",
                         env=database_env)
        assert narrow.returncode == 0, narrow.stderr
        stored = database.personal_access_tokens.find_one({"name": "ci"})
        assert stored["abilities"] == ["posts:read", "posts:publish-posts"]
        assert database.personal_access_tokens.find_one({"name": "console"})["abilities"] == ["*"]
    finally:
        client.close()
    unknown = restify("token:create", email, "--abilities", "posts:fly", env=database_env)
    assert unknown.returncode == 2
    assert unknown.stderr == 'restify: The ability "posts:fly" is not read, write or an action of posts.\n'
    revoked = restify("token:revoke", email, env=database_env)
    assert revoked.stdout.strip() == f"Revoked 2 token(s) of {email}"
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
                            capture_output=True, text=True, timeout=RUN_WAIT, cwd=ROOT,
                            env={**os.environ, **database_env})
    line = next(n for n, text in enumerate(module.read_text().splitlines(), 1) if "maximum:50" in text)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"{module}:{line}: DeclarationError: TagRepository: field 'name': "
                             "unknown rule 'maximum:50'\n")
