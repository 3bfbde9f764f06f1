"""`restify seed`: the application's own seeder, through the operations layer, once."""
import pymongo
import pytest

from tests.processes import restify

SEEDED = "Seeded 60 comments, 20 posts, 10 tags, 2 users.\n"


@pytest.fixture
def database(database_env):
    client = pymongo.MongoClient(database_env["MONGODB_URI"])
    yield client[database_env["RESTIFY_DATABASE_NAME"]]
    client.close()


def holding(database) -> dict[str, int]:
    """Collections with documents in them, and how many."""
    counts = {name: database[name].count_documents({}) for name in database.list_collection_names()}
    return {name: n for name, n in counts.items() if n}


def test_seed_runs_the_demo_seeder_through_the_operations(app_copy, database_env, database):
    result = restify("seed", "--scale", "0.1", app_dir=app_copy, env=database_env)
    assert (result.returncode, result.stdout, result.stderr) == (0, SEEDED, "")
    assert holding(database) == {"comments": 60, "posts": 20, "tags": 10, "users": 2}  # no tokens either
    users = {str(user["_id"]): user for user in database.users.find()}
    assert sorted(user["email"] for user in users.values()) == ["user1@example.com", "user2@example.com"]
    assert all(user["password"].startswith("$argon2id$") for user in users.values())  # the password field hashed
    post_ids = set()
    tag_ids = {str(tag["_id"]) for tag in database.tags.find()}
    for post in database.posts.find():
        assert post["user_id"] in users  # server-set from the acting user, as on the API
        assert post["created_at"] <= post["updated_at"] and post["created_at"].endswith("Z")
        assert 1 <= len(post["tag_ids"]) <= 3 and set(post["tag_ids"]) <= tag_ids  # attached by its author
        assert post["_version"] == 2  # stored, then attached to
        post_ids.add(str(post["_id"]))
    assert {comment["post_id"] for comment in database.comments.find()} <= post_ids


def test_seed_on_a_seeded_database_writes_nothing_unless_fresh(app_copy, database_env, database):
    assert restify("seed", "--scale", "0.1", app_dir=app_copy, env=database_env).returncode == 0
    first_ids = {post["_id"] for post in database.posts.find()}
    again = restify("seed", "--scale", "0.1", app_dir=app_copy, env=database_env)
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout == ("The database is already seeded (60 comments, 20 posts, 10 tags, 2 users); nothing "
                            "written. `restify seed --fresh` drops the application's collections and seeds again.\n")
    assert database.posts.count_documents({}) == 20 and database.users.count_documents({}) == 2
    fresh = restify("seed", "--fresh", "--scale", "0.1", app_dir=app_copy, env=database_env)
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (0, SEEDED, "")
    assert database.posts.count_documents({}) == 20 and database.users.count_documents({}) == 2
    assert not first_ids & {post["_id"] for post in database.posts.find()}
    unique = restify("seed", "--fresh", "--scale", "0.1", app_dir=app_copy, env=database_env)
    assert unique.returncode == 0  # the unique email index came back after the drop: no duplicate slipped in
    assert len(database.users.index_information()) >= 2


def run_seeder_as_ann(app_copy, database_env, *lines: str):
    """`restify seed` with a seeder that registers Ann, then runs `lines` (`user` is Ann)."""
    (app_copy / "repositories" / "seeders.py").write_text("\n".join([
        "async def seed(seeder):",
        "    user = await seeder.user({'name': 'Ann', 'email': 'ann@example.com', 'password': 'password',",
        "                              'password_confirmation': 'password'})",
        *(f"    {line}" for line in lines)]) + "\n")
    result = restify("seed", app_dir=app_copy, env=database_env)
    assert (result.returncode, result.stdout) == (2, "")
    return result.stderr, app_copy / "repositories" / "seeders.py"


def test_seed_writes_only_what_the_seeder_stores_in_declared_repositories(app_copy, database_env, database):
    stderr, seeders = run_seeder_as_ann(app_copy, database_env, "await seeder.store('tags', {'name': 'one'}, user)",
                                        "await seeder.store('widgets', {'name': 'two'}, user)")
    assert stderr == (f"{seeders}:5: NotFound: No repository 'widgets'; "
                      "the repositories are: comments, posts, tags, users.\n")
    assert holding(database) == {"tags": 1, "users": 1}  # no widgets, no token, no posts or comments


def test_a_seeded_record_that_fails_validation_names_the_line_and_the_errors(app_copy, database_env):
    stderr, seeders = run_seeder_as_ann(app_copy, database_env,
                                        "await seeder.store('posts', {'title': 'x' * 300}, user)")
    assert stderr == (f"{seeders}:4: ValidationFailed: The given data was invalid. "
                      '{"title": ["The title may not be greater than 255 characters."]}\n')


def test_an_application_without_a_seeder_says_so(app_copy, database_env, database):
    (app_copy / "repositories" / "seeders.py").unlink()
    result = restify("seed", app_dir=app_copy, env=database_env)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"restify: no seeder: write {app_copy / 'repositories' / 'seeders.py'} "
                             "with `async def seed(seeder)`\n")
    assert holding(database) == {}


def test_a_seeders_module_without_a_seed_function_is_reported(app_copy, database_env):
    (app_copy / "repositories" / "seeders.py").write_text("def seed(seeder):\n    pass\n")
    result = restify("seed", app_dir=app_copy, env=database_env)
    assert (result.returncode, result.stderr) == (
        2, f"{app_copy / 'repositories' / 'seeders.py'}:1: defines no `async def seed(seeder)`\n")
