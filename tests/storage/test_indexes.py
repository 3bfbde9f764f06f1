"""Index creation and listing through storage, on the embedded server (default) and on MongoDB
(`MONGODB_URI=... pytest`): what each server accepts and how it lists what it made."""
import os

import pytest

from storage import IndexRefused

EMBEDDED = not os.environ.get("MONGODB_URI")


async def test_the_server_is_recognised(db):
    support = await db.index_support()
    assert support.server == ("nx-27017 (embedded)" if EMBEDDED else "MongoDB")
    assert support.id_in_compound is not EMBEDDED
    assert support.keeps_names is not EMBEDDED


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
