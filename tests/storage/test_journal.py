"""The bulk journal (storage/journal.py): an entry before a bulk write's first write, removed after its
last; taking a bulk write back touches only what the bulk itself left; recovery takes back entries
older than a request can last and leaves younger ones (bulk writes under way) alone."""
import time

import pymongo
import pytest
from bson import ObjectId

from storage import BULK_MARK, JOURNAL, VERSION, Filter, Step, new_id

HOUR = 3600


@pytest.fixture
def raw(mongodb_uri, db_name):
    """The test's database through a plain driver client: what a crash leaves is made by hand here."""
    client = pymongo.MongoClient(mongodb_uri)
    yield client[db_name]
    client.close()


def age(raw, entry, seconds: float) -> None:
    """Makes an entry (its header and record documents) as old as `seconds`: its process died that long ago."""
    raw[JOURNAL].update_many({"$or": [{"_id": ObjectId(entry.id)}, {"entry": entry.id}]},
                             {"$set": {"started": time.time() - seconds}})


async def journal_size(db) -> int:
    return await db.collection(JOURNAL).count(Filter())


async def titles(db) -> list[str]:
    return sorted(d["title"] for d in await db.collection("posts").find(Filter()))


async def test_an_entry_holds_every_record_and_is_removed_when_the_bulk_write_ends(db):
    journal = db.journal()
    entry = await journal.begin("posts", "store", [Step(new_id(), version=1), Step(new_id(), version=1)])
    assert await journal_size(db) == 3  # the header and one document a record
    assert await journal.end(entry) is True
    assert await journal_size(db) == 0


async def test_taking_back_a_store_deletes_each_record_only_as_the_bulk_created_it(db):
    posts, journal = db.collection("posts"), db.journal()
    one, two, never = new_id(), new_id(), new_id()
    entry = await journal.begin("posts", "store", [Step(i, version=1) for i in (one, two, never)])
    for id, title in ((one, "one"), (two, "two")):
        await posts.insert({"id": id, "title": title, VERSION: 1})
    await posts.swap(two, {"title": "changed"})  # another writer, since
    assert await journal.undo(entry) is True
    assert await titles(db) == ["changed"]


async def test_taking_back_an_update_puts_back_only_what_the_bulk_left(db):
    posts, journal = db.collection("posts"), db.journal()
    stored = [await posts.insert({"title": t, VERSION: 1}) for t in ("a", "b", "c", "d")]
    entry = await journal.begin("posts", "update", [Step(d["id"], before=d, version=2) for d in stored])
    a, b, c, d = (d["id"] for d in stored)
    for id in (a, b, c):  # the bulk wrote three records, then stopped
        await posts.swap(id, {"title": "bulk", BULK_MARK: entry.id}, versions=(1,))
    await posts.delete(b)                     # another writer deleted b since,
    await posts.swap(c, {"title": "c later"})  # changed c since,
    await posts.swap(d, {"title": "d other"})  # and changed d, which the bulk never wrote, to the same version
    assert await journal.undo(entry) is True
    assert await titles(db) == ["a", "c later", "d other"]
    assert await posts.find_by_id(a) == stored[0]  # as it was, version included


async def test_taking_back_a_delete_recreates_only_records_that_are_gone(db):
    posts, journal = db.collection("posts"), db.journal()
    stored = [await posts.insert({"title": t, "views": 3, VERSION: 4}) for t in ("a", "b")]
    entry = await journal.begin("posts", "delete", [Step(d["id"], before=d) for d in stored])
    await posts.remove(stored[0]["id"], (4,))          # the bulk deleted a, then stopped
    await posts.swap(stored[1]["id"], {"title": "b later"})  # another writer changed b, never deleted
    assert await journal.undo(entry) is True
    assert await posts.find_by_id(stored[0]["id"]) == stored[0]
    assert await titles(db) == ["a", "b later"]


async def test_taking_back_twice_is_taking_back_once(db):
    posts, journal = db.collection("posts"), db.journal()
    stored = await posts.insert({"title": "a", VERSION: 1})
    entry = await journal.begin("posts", "update", [Step(stored["id"], before=stored, version=2)])
    await posts.swap(stored["id"], {"title": "bulk", BULK_MARK: entry.id}, versions=(1,))
    assert await journal.undo(entry) is True
    await posts.swap(stored["id"], {"title": "later"})  # version 2 again, by someone else
    assert await journal.undo(entry) is True
    assert await titles(db) == ["later"]


async def test_recovery_takes_back_old_entries_and_leaves_bulk_writes_under_way_alone(db, raw):
    posts, journal = db.collection("posts"), db.journal()
    dead, alive = new_id(), new_id()
    died = await journal.begin("posts", "store", [Step(dead, version=1)])
    await posts.insert({"id": dead, "title": "left by a dead process", VERSION: 1})
    age(raw, died, HOUR)
    under_way = await journal.begin("posts", "store", [Step(alive, version=1)])
    await posts.insert({"id": alive, "title": "being written", VERSION: 1})
    assert await journal.recover(older_than=60) == 1
    assert await titles(db) == ["being written"]
    assert await journal_size(db) == 2  # the fresh entry, whole
    assert await journal.end(under_way) is True
    assert await journal_size(db) == 0


async def test_a_bulk_write_whose_entry_recovery_claimed_cannot_end_it(db):
    journal = db.journal()
    entry = await journal.begin("posts", "store", [Step(new_id(), version=1)])
    assert await journal.recover(older_than=0) == 1
    assert await journal.end(entry) is False  # it must take itself back instead


async def test_recovery_removes_record_documents_whose_entry_ended(db, raw):
    posts, journal = db.collection("posts"), db.journal()
    id = new_id()
    entry = await journal.begin("posts", "store", [Step(id, version=1)])
    await posts.insert({"id": id, "title": "written", VERSION: 1})
    raw[JOURNAL].delete_one({"_id": ObjectId(entry.id)})  # the bulk write ended, and died before removing the rest
    age(raw, entry, HOUR)
    assert await journal.recover(older_than=60) == 0
    assert await journal_size(db) == 0
    assert await titles(db) == ["written"]  # nothing of an ended bulk write is taken back
