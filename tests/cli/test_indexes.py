"""`restify indexes` prints the plan beside what the database has; `restify serve` makes the plan at
start. Run as real processes on this session's database server."""
import os

import pymongo

from storage.embedded import free_port
from tests.processes import ROOT as ROOT_APP, Server, restify

EMBEDDED = not os.environ.get("MONGODB_URI")
UNSUPPORTED = " — not supported by this server; {views: 1} serves instead"


def _section(output: str, collection: str) -> list[str]:
    lines = output.splitlines()
    start = lines.index(collection) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def test_indexes_prints_the_plan_beside_what_exists(database_env):
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    try:
        db = client[database_env["RESTIFY_DATABASE_NAME"]]
        db.users.create_index("email")  # planned unique, made plain
        db.posts.create_index("legacy")  # not planned
        db.posts.create_index([("views", 1)] if EMBEDDED else [("views", 1), ("_id", 1)])
    finally:
        client.close()
    result = restify("indexes", env=database_env)
    assert result.returncode == 0, result.stderr
    assert _section(result.stdout, "users") == [
        "  not unique   {email: 1} unique  (unique rule of users)",
        "  missing      {created_at: 1, _id: 1}  (sortable)"
        + (" — not supported by this server; {created_at: 1} serves instead" if EMBEDDED else ""),
        "  missing      {name: 1, _id: 1}  (sort of posts by user.name; sortable)"
        + (" — not supported by this server; {name: 1} serves instead" if EMBEDDED else ""),
    ]
    posts = _section(result.stdout, "posts")
    assert "  exists       {views: 1, _id: 1}  (matchable; sortable)" + (UNSUPPORTED if EMBEDDED else "") in posts
    assert posts[-1] == "  not planned  {legacy: 1}  (name " + ("idx_posts_legacy" if EMBEDDED else "legacy_1") + ")"
    if EMBEDDED:
        assert "This server refuses a compound index that includes _id" in result.stdout
        assert "This server renames the indexes it makes and lists every key as ascending (1)." in result.stdout
    text = "  not used     {title: text}  (text search) — this server is not sent $text: search tests substrings"
    assert (text in posts) is EMBEDDED  # the embedded server keeps the substring test: no text index
    planned = 17 if EMBEDDED else 18
    assert result.stdout.endswith(f"{planned} planned, 1 in place, {planned - 1} missing or not unique.\n")


def test_serve_makes_the_plan_at_start(database_env, tmp_path):
    server = Server(ROOT_APP, database_env, log_dir=tmp_path)
    server.stop()
    result = restify("indexes", env=database_env)
    assert result.returncode == 0, result.stderr
    planned = 17 if EMBEDDED else 18  # the text index, where the server is sent $text
    assert result.stdout.endswith(f"{planned} planned, {planned} in place, 0 missing or not unique.\n")
    assert "not planned" not in result.stdout


def test_with_auto_indexes_off_serve_makes_only_the_unique_indexes(database_env, tmp_path):
    env = {**database_env, "RESTIFY_DATABASE_AUTO_INDEXES": "false"}
    server = Server(ROOT_APP, env, log_dir=tmp_path)
    server.stop()
    result = restify("indexes", env=env)
    assert "database.auto_indexes is off: `serve` makes only the unique indexes." in result.stdout
    # On the embedded server the unique {name: 1} of tags also stands for their sortable field.
    in_place, planned = (4, 17) if EMBEDDED else (3, 18)
    assert result.stdout.endswith(f"{planned} planned, {in_place} in place, {planned - in_place} missing or not unique.\n")


def test_serve_stops_when_stored_values_break_a_unique_rule(database_env):
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    try:
        client[database_env["RESTIFY_DATABASE_NAME"]].users.insert_many(
            [{"email": "ann@example.com"}, {"email": "ann@example.com"}])
    finally:
        client.close()
    result = restify("serve", "--port", str(free_port()), env=database_env)
    assert result.returncode == 1
    assert result.stderr.startswith("restify: cannot serve: the unique index users ['email'] cannot be made: ")


def test_the_profile_set_in_the_environment_decides_the_shapes_the_server_is_sent(database_env):
    result = restify("indexes", env={**database_env, "RESTIFY_DATABASE_PROFILE": "mongodb"})
    assert result.returncode == 0, result.stderr
    server = "nx-27017 (embedded), sent MongoDB's query shapes" if EMBEDDED else "MongoDB"
    assert result.stdout.startswith(f"Server: {server}. Indexes are compared by their keys, not their names.\n")
    # The index plan is the server's own whatever the profile.
    assert ("This server refuses a compound index that includes _id" in result.stdout) is EMBEDDED
    refused = restify("indexes", env={**database_env, "RESTIFY_DATABASE_PROFILE": "mongo"})
    assert refused.stderr == "restify: database.profile must be one of auto, mongodb, embedded, not 'mongo'\n"
