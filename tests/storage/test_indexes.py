"""Index creation and listing through storage, on the embedded server (default) and on MongoDB
(`MONGODB_URI=... pytest`): what each server accepts and how it lists what it made; and the profile
(`database.profile`), which decides whose shapes the server is sent."""
import logging

import pytest

from storage import DuplicateKey, Filter, IndexRefused, connect, indexes
from tests.servers import EMBEDDED_SERVER as EMBEDDED
from tests.servers import EMBEDDED_SHAPES, PROFILE

SHAPES = ("id_ranges_indexed", "aggregate_binds_ids", "or_indexed")  # the query shapes a profile decides
ANSWERS = ("id_in_compound", "reports_direction", "keeps_names")  # what the server accepts and lists


def shapes(support):
    return {name: getattr(support, name) for name in SHAPES}


async def test_the_server_is_recognised(db):
    support = await db.index_support()
    server = "nx-27017 (embedded)" if EMBEDDED else "MongoDB"
    assert support.server == server if EMBEDDED_SHAPES is EMBEDDED else support.server.startswith(server + ", sent ")
    assert support.or_indexed is not EMBEDDED_SHAPES
    assert support.id_in_compound is not EMBEDDED  # what the server accepts and lists stays its own
    assert support.keeps_names is not EMBEDDED


@pytest.mark.parametrize("profile", ["auto", "mongodb", "embedded", " MongoDB ", ""])
async def test_the_profile_decides_the_query_shapes_and_not_the_indexes(mongodb_uri, db_name, profile):
    database = connect(mongodb_uri, db_name, profile=profile)
    try:
        support = await database.index_support()
    finally:
        database.close()
    server = indexes.EMBEDDED if EMBEDDED else indexes.MONGODB
    chosen = {"auto": server, "mongodb": indexes.MONGODB, "embedded": indexes.EMBEDDED}[indexes.profile_name(profile)]
    assert shapes(support) == shapes(chosen)
    assert [getattr(support, name) for name in ANSWERS] == [getattr(server, name) for name in ANSWERS]
    assert (support == server) is (chosen == server)


def test_an_unknown_profile_is_refused_before_anything_is_sent():
    with pytest.raises(ValueError, match=r"^database.profile must be one of auto, mongodb, embedded, not 'mongo'$"):
        connect("mongodb://127.0.0.1:9", "nothing", profile="mongo")


def test_the_embedded_servers_shapes_forced_on_mongodb_are_warned_about(caplog):
    with caplog.at_level(logging.WARNING, logger="restify"):
        assert shapes(indexes.support_for(indexes.MONGODB, "embedded")) == shapes(indexes.EMBEDDED)
    assert "some answers will be wrong" in caplog.text
    assert indexes.support_for(indexes.MONGODB, "auto") is indexes.MONGODB
    assert indexes.support_for(indexes.EMBEDDED, "embedded") is indexes.EMBEDDED


def test_the_tests_open_their_databases_with_the_profile_they_were_given(db):
    assert db.profile == PROFILE


async def test_a_created_index_is_listed_by_its_keys(db):
    posts = db.collection("posts")
    await posts.insert({"views": 3, "tag_ids": ["a", "b"]})
    await posts.create_index((("views", 1),))
    await posts.create_index((("tag_ids", 1),))  # an array field: a multikey index
    await posts.create_index((("views", 1),))  # made again: nothing happens
    listed = {index.keys: index for index in await posts.indexes()}
    assert set(listed) == {(("id", 1),), (("views", 1),), (("tag_ids", 1),)}
    assert not listed[(("views", 1),)].unique
    assert listed[(("views", 1),)].name == ("idx_posts_views" if EMBEDDED else "views_1")


async def test_a_unique_index_is_listed_as_unique(db):
    users = db.collection("users")
    await users.ensure_unique("email")
    listed = {index.keys: index.unique for index in await users.indexes()}
    assert listed[(("email", 1),)] is True


async def test_a_unique_index_over_repeated_values_is_refused(db):
    users = db.collection("users")
    await users.insert({"email": "ann@example.com"})
    await users.insert({"email": "ann@example.com"})
    with pytest.raises(IndexRefused):
        await users.ensure_unique("email")


async def test_a_compound_index_with_the_id_tie_break(db):
    # Sent as asked on every profile: what the server accepts is the server's.
    posts = db.collection("posts")
    await posts.insert({"views": 3})
    if EMBEDDED:
        with pytest.raises(IndexRefused):
            await posts.create_index((("views", 1), ("id", 1)))
        assert [index.keys for index in await posts.indexes()] == [(("id", 1),)]
    else:
        await posts.create_index((("views", 1), ("id", 1)))
        assert (("views", 1), ("id", 1)) in [index.keys for index in await posts.indexes()]


async def test_a_collection_not_yet_made_lists_at_most_the_id_index(db):
    # MongoDB lists nothing; the embedded server lists the `_id` index every collection will have.
    assert [index.keys for index in await db.collection("nothing_here").indexes()] in ([], [(("id", 1),)])


async def test_a_unique_index_with_the_trash_stamp_frees_trashed_values(db):
    """Soft deletes key a `unique:` index with `deleted_at`: trashed records (their own stamp) never
    collide. Live ones (null or absent stamp) collide on MongoDB; the embedded server keeps null keys
    distinct, so there the write path's own check is the only guard of live records."""
    tags = db.collection("tags")
    await tags.create_index((("name", 1), ("deleted_at", 1)), unique=True)
    await tags.insert({"name": "news", "deleted_at": "2026-01-01T00:00:00.000000Z"})
    await tags.insert({"name": "news", "deleted_at": "2026-01-02T00:00:00.000000Z"})
    await tags.insert({"name": "news"})
    if EMBEDDED:
        await tags.insert({"name": "news", "deleted_at": None})
        assert await tags.count(Filter(equals={"name": "news"})) == 4
    else:
        with pytest.raises(DuplicateKey):
            await tags.insert({"name": "news", "deleted_at": None})
        assert await tags.count(Filter(equals={"name": "news"})) == 3
