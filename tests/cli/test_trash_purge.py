"""`restify trash:purge --older-than 30d`: deletes for good what repositories with soft deletes
trashed longer ago than that, and nothing else."""
from datetime import datetime, timedelta, timezone

import pymongo

from tests.processes import restify


def stamp(days_ago: int) -> str:
    moment = datetime.now(timezone.utc) - timedelta(days=days_ago)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_purge_deletes_only_what_was_trashed_long_enough_ago(app_copy, database_env):
    posts = app_copy / "repositories" / "posts.py"
    posts.write_text(posts.read_text().replace("class PostRepository(Repository):\n",
                                               "class PostRepository(Repository):\n    soft_deletes = True\n"))
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    try:
        collection = client[database_env["RESTIFY_DATABASE_NAME"]]["posts"]
        collection.insert_many([{"title": "old", "deleted_at": stamp(40)}, {"title": "recent", "deleted_at": stamp(3)},
                                {"title": "live", "deleted_at": None}, {"title": "never trashed"}])
        result = restify("trash:purge", "--older-than", "30d", env=database_env, app_dir=app_copy)
        assert result.returncode == 0, result.stderr
        # every repository with soft deletes, the demo's comments too
        assert result.stdout == "comments\t0 record(s) deleted for good\nposts\t1 record(s) deleted for good\n"
        assert sorted(d["title"] for d in collection.find()) == ["live", "never trashed", "recent"]
    finally:
        client.close()


def test_a_malformed_age_is_refused_with_the_accepted_forms(database_env):
    result = restify("trash:purge", "--older-than", "a month", env=database_env)
    assert result.returncode == 2
    assert "'a month' is not a duration: write a whole number and d, h, m or s (30d, 12h)" in result.stderr
