"""Change streams through storage: what the feeds rely on, proved on the server in use.

Each known difference of the embedded server that storage/changes.py works around
has a test here; run with MONGODB_URI (a replica set) to see the same behaviour on MongoDB.
"""
import asyncio
import os

import pytest
from motor.motor_asyncio import AsyncIOMotorClient

from storage import VERSION, EmbeddedServer, HistoryLost, connect
from tests.conftest import DATABASE_TIMEOUT_MS

EMBEDDED = not os.environ.get("MONGODB_URI")
# Seconds to wait for an event before failing: it bounds a hang, so it leaves room for a busy machine.
WAIT = 60.0


class Collector:
    """A listener that keeps every change and lets a test wait for a number of them."""

    def __init__(self) -> None:
        self.changes = []
        self._arrived = asyncio.Event()

    async def __call__(self, changes) -> None:
        self.changes.extend(changes)
        self._arrived.set()

    async def wait_for(self, count: int) -> list:
        async def enough() -> None:
            while len(self.changes) < count:
                self._arrived.clear()
                await self._arrived.wait()
        await asyncio.wait_for(enough(), WAIT)
        return self.changes


@pytest.fixture
def raw(db, mongodb_uri, db_name):
    """The same database through a plain Motor client: for shapes storage itself never sends."""
    client = AsyncIOMotorClient(mongodb_uri)
    yield client[db_name]
    client.close()


async def test_watcher_reports_inserts_updates_and_deletes_with_ids_from_the_document_key(db):
    posts, seen = db.collection("posts"), Collector()
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        stored = await posts.insert({"title": "a"})
        await posts.update(stored["id"], {"title": "b"})
        await posts.delete(stored["id"])
        changes = await seen.wait_for(3)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    assert [(c.operation, c.id) for c in changes] == [("insert", stored["id"])] + \
        [("update", stored["id"]), ("delete", stored["id"])]
    # fullDocument._id is an internal object on the embedded server: the id comes from documentKey.
    assert changes[0].document == {"id": stored["id"], "title": "a"}
    assert changes[1].document == {"id": stored["id"], "title": "b", VERSION: 1}  # every update adds one
    assert len({c.token for c in changes}) == 3


async def test_an_update_carries_the_document_this_process_replaced(db, raw):
    """The write path's swap hands the image it replaced to the watcher; another program's write
    (here a plain Motor client) hands nothing, so its change has no pre-image on the embedded server."""
    posts, seen = db.collection("posts"), Collector()
    stored = await posts.insert({"title": "a", "published": True, VERSION: 1})  # as the write path stores it
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        await posts.swap(stored["id"], {"published": False})
        await posts.swap(stored["id"], {"title": "b"})
        await raw.posts.update_one({"title": "b"}, {"$set": {"title": "c"}})
        changes = await seen.wait_for(3)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    befores = [(c.before or {}).get("published") for c in changes]
    assert [(c.before or {}).get(VERSION) for c in changes[:2]] == [1, 2]
    assert befores[:2] == [True, False]
    if EMBEDDED:
        assert changes[2].before is None


async def test_a_write_nobody_watches_keeps_no_pre_image(db):
    from storage.pre_images import pre_images
    posts = db.collection("posts")
    stored = await posts.insert({"title": "a"})
    await posts.swap(stored["id"], {"title": "b"})
    assert pre_images(db.name, "posts")._slots == {}


@pytest.mark.skipif(not EMBEDDED, reason="MongoDB gives a pre-delete image only with pre-images enabled")
async def test_a_delete_carries_the_document_as_it_was_before_the_delete(db):
    posts, seen = db.collection("posts"), Collector()
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        stored = await posts.insert({"title": "gone", "user_id": "u1"})
        await posts.delete(stored["id"])
        changes = await seen.wait_for(2)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    assert changes[1].operation == "delete"
    assert changes[1].document == {"id": stored["id"], "title": "gone", "user_id": "u1"}


async def test_a_replace_arrives_as_an_update_with_the_whole_new_document(db, raw):
    posts, seen = db.collection("posts"), Collector()
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        stored = await posts.insert({"title": "a", "body": "x"})
        await raw.posts.replace_one({"_id": (await raw.posts.find_one())["_id"]}, {"title": "r"})
        changes = await seen.wait_for(2)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    assert (changes[1].operation, changes[1].id) == ("update", stored["id"])
    assert changes[1].document == {"id": stored["id"], "title": "r"}


@pytest.mark.parametrize("match", [{"fullDocument.views": {"$gt": 0}},
                                   {"$or": [{"operationType": "insert"}, {"operationType": "update"}]}])
async def test_a_stream_pipeline_with_gt_or_or_drops_every_event_on_the_embedded_server(db, raw, match):
    """Why the watcher opens its stream without a pipeline and feeds filter in the process."""
    filtered = raw.posts.watch([{"$match": match}])
    await filtered.try_next()  # opens it
    whole, seen = db.watcher("posts"), Collector()
    await whole.listen(seen)
    try:
        await db.collection("posts").insert({"title": "a", "views": 5})
        await seen.wait_for(1)
        event = await filtered.try_next()
    finally:
        whole.forget(seen)
        await whole.stopped()
        await filtered.close()
    assert (event is None) is EMBEDDED


async def test_an_idle_watcher_sleeps_between_empty_batches(db, commands):
    """The embedded server answers an idle getMore at once: a plain loop would send thousands a second."""
    watcher, seen = db.watcher("posts", idle_seconds=0.1), Collector()
    await watcher.listen(seen)
    try:
        commands.reset()
        await asyncio.sleep(1.0)
        getmores = sum(1 for name, _ in commands.commands if name == "getMore")
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    assert 1 <= getmores <= 20


async def test_a_watcher_rests_as_long_as_its_most_demanding_listener_allows(db, commands):
    """A listener content with a slow pace (the identity cache) does not make the stream poll at the
    live feeds' pace; one that needs that pace gets it while it listens."""
    watcher, patient, eager = db.watcher("posts", idle_seconds=0.05), Collector(), Collector()
    await watcher.listen(patient, rest=2.0)
    try:
        assert watcher.rest_seconds == 2.0
        commands.reset()
        await asyncio.sleep(1.0)
        assert sum(1 for name, _ in commands.commands if name == "getMore") <= 2  # 20 at the watcher's pace
        await watcher.listen(eager)
        assert watcher.rest_seconds == 0.05
        await db.collection("posts").insert({"title": "seen by both"})
        assert [c.operation for c in await eager.wait_for(1)] == ["insert"]
        assert [c.operation for c in await patient.wait_for(1)] == ["insert"]
        watcher.forget(eager)
        assert watcher.rest_seconds == 2.0
        await watcher.listen(eager, rest=0.001)  # never faster than the watcher's own pace
        assert watcher.rest_seconds == 0.05
    finally:
        watcher.forget(patient)
        watcher.forget(eager)
        await watcher.stopped()
    assert watcher.rest_seconds == 0.05


async def test_a_second_listener_shares_the_one_stream_of_the_collection(db, commands):
    watcher = db.watcher("posts")
    assert db.watcher("posts") is watcher
    first, second = Collector(), Collector()
    await watcher.listen(first)
    commands.reset()
    await watcher.listen(second)
    try:
        assert not [c for c in commands.commands if c[0] == "aggregate"]  # no second stream opened
        await db.collection("posts").insert({"title": "a"})
        assert [c.operation for c in await first.wait_for(1)] == ["insert"]
        assert [c.operation for c in await second.wait_for(1)] == ["insert"]
    finally:
        watcher.forget(first)
        watcher.forget(second)
        await watcher.stopped()
    assert not watcher.listening


async def test_changes_since_a_token_are_read_back_in_order(db):
    posts, seen = db.collection("posts"), Collector()
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        titles = [(await posts.insert({"title": t}))["id"] for t in "abcd"]
        changes = await seen.wait_for(4)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    later = await db.changes_since("posts", changes[1].token)
    assert [c.id for c in later] == titles[2:]
    assert [c.token for c in later] == [c.token for c in changes[2:]]
    assert await db.changes_since("posts", changes[3].token) == []


@pytest.mark.parametrize("token", ["garbage", "nx:999999", "nx:", ""])
async def test_a_token_the_database_does_not_know_is_history_lost(db, token):
    """The embedded server takes any token silently, and one from the future would hide every
    later change: storage checks the token against the stream's position first."""
    await db.collection("posts").insert({"title": "a"})
    with pytest.raises(HistoryLost):
        await db.changes_since("posts", token)


async def test_changes_since_refuses_more_than_its_limit(db):
    posts, seen = db.collection("posts"), Collector()
    watcher = db.watcher("posts")
    await watcher.listen(seen)
    try:
        for title in "abcde":
            await posts.insert({"title": title})
        changes = await seen.wait_for(5)
    finally:
        watcher.forget(seen)
        await watcher.stopped()
    assert len(await db.changes_since("posts", changes[0].token, limit=4)) == 4
    with pytest.raises(HistoryLost):
        await db.changes_since("posts", changes[0].token, limit=3)


@pytest.mark.skipif(not EMBEDDED, reason="restarts a database server of its own")
async def test_the_watcher_resumes_by_token_after_the_database_went_away(tmp_path, caplog):
    server = EmbeddedServer(tmp_path / "db").start()
    database = connect(server.uri, "resume", timeout_ms=300)
    # Writes go through clients of their own: a pooled connection to the stopped server would fail once.
    writer = connect(server.uri, "resume", timeout_ms=DATABASE_TIMEOUT_MS)
    watcher, seen = database.watcher("posts", idle_seconds=0.05), Collector()
    try:
        await watcher.listen(seen)
        first = await writer.collection("posts").insert({"title": "before"})
        await seen.wait_for(1)
        server.stop()
        await asyncio.sleep(0.5)  # the watcher fails at least once meanwhile
        server = EmbeddedServer(tmp_path / "db", port=server.port).start()
        writer.close()
        writer = connect(server.uri, "resume", timeout_ms=DATABASE_TIMEOUT_MS)
        second = await writer.collection("posts").insert({"title": "after"})
        changes = await seen.wait_for(2)
        await asyncio.sleep(0.3)  # anything repeated would have arrived by now
    finally:
        watcher.forget(seen)
        await watcher.stopped()
        database.close()
        writer.close()
        server.stop()
    assert [(c.id, c.document["title"]) for c in seen.changes] == [(first["id"], "before"), (second["id"], "after")]
    assert changes[0].token != changes[1].token
    assert "change stream of posts failed" in caplog.text
