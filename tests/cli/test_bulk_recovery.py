"""What a process killed in the middle of a bulk write leaves is taken back: by `restify serve` when it
starts, and by the pass every process runs once a minute; an entry younger than
`bulk.recover_after_seconds` belongs to a bulk write that may be under way, and is left alone."""
import asyncio
import threading
import time
from pathlib import Path

import pymongo
import pytest
from bson import ObjectId

from service.console.recovery import recover_periodically
from storage import JOURNAL, VERSION, Filter, Step, has_transactions, new_id
from tests.processes import START_WAIT, Server, register, request

INSERTS_BEFORE_KILL = 21
# A module of the test application: pauses the process's driver just before the n-th insert into
# posts (the environment names n), so the test kills the process mid-write at a known point. The
# variable is taken at the first import, so one process registers one listener.
PAUSE_MODULE = '''"""Test only: stops this process's database driver before the n-th insert into posts."""
import os
import time

from pymongo import monitoring


class PauseBeforeInsert(monitoring.CommandListener):
    def __init__(self, nth):
        self.nth, self.seen = nth, 0

    def started(self, event):
        if event.command_name == "insert" and event.command.get("insert") == "posts":
            self.seen += 1
            if self.seen == self.nth:
                time.sleep(3600)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


NTH = os.environ.pop("PAUSE_BEFORE_POSTS_INSERT", None)
if NTH:
    monitoring.register(PauseBeforeInsert(int(NTH)))
'''


@pytest.fixture
def raw(mongodb_uri, database_env):
    """The served database, through a plain driver client."""
    client = pymongo.MongoClient(mongodb_uri)
    yield client[database_env["RESTIFY_DATABASE_NAME"]]
    client.close()


@pytest.fixture
def raw_db(mongodb_uri, db_name):
    """The test's own database (the `db` fixture's), through a plain driver client."""
    client = pymongo.MongoClient(mongodb_uri)
    yield client[db_name]
    client.close()


def wait_for(check, seconds: float = START_WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_bulk_store_killed_mid_write_is_taken_back_when_serve_starts_again(app_copy, database_env, raw):
    if has_transactions(raw.client.admin.command("hello")):
        pytest.skip("bulk writes run in transactions on this server: a killed one is aborted by the server")
    (app_copy / "repositories" / "paused_writes.py").write_text(PAUSE_MODULE)
    server = Server(app_copy, {**database_env, "PAUSE_BEFORE_POSTS_INSERT": str(INSERTS_BEFORE_KILL + 1)})
    try:
        token = register(server.port)
        items = [{"title": f"post {i}"} for i in range(100)]

        def send() -> None:
            try:
                request(server.port, "POST", "/api/restify/posts/bulk", items, token)  # type: ignore[arg-type]
            except OSError:  # the process is killed before it answers
                pass

        threading.Thread(target=send, daemon=True).start()
        wait_for(lambda: raw.posts.count_documents({}) == INSERTS_BEFORE_KILL)
        entry, = raw[JOURNAL].find({"state": {"$exists": True}})
    finally:
        server.process.kill()  # kill -9, mid-write
        server.process.wait(timeout=START_WAIT)
        server.log.close()
    assert entry["state"] == "writing" and raw[JOURNAL].count_documents({"entry": str(entry["_id"])}) == 100
    assert raw.posts.count_documents({}) == INSERTS_BEFORE_KILL  # what the dead process left
    wait_for(lambda: time.time() - entry["started"] > 1)
    again = Server(app_copy, {**database_env, "RESTIFY_BULK_RECOVER_AFTER_SECONDS": "1"})
    try:
        assert raw.posts.count_documents({}) == 0
        assert raw[JOURNAL].count_documents({}) == 0
        assert "took back 1 unfinished bulk write" in Path(again.log.name).read_text()
    finally:
        assert again.stop() == 0


async def test_the_periodic_pass_takes_back_old_entries_and_leaves_fresh_ones_alone(restify, db, raw_db):
    posts, journal = db.collection("posts"), db.journal()
    dead, alive = new_id(), new_id()
    died = await journal.begin("posts", "store", [Step(dead, version=1)])
    await posts.insert({"id": dead, "title": "left by a dead process", VERSION: 1})
    raw_db[JOURNAL].update_many({"$or": [{"_id": ObjectId(died.id)}, {"entry": died.id}]},
                                {"$set": {"started": time.time() - 3600}})
    under_way = await journal.begin("posts", "store", [Step(alive, version=1)])
    await posts.insert({"id": alive, "title": "being written", VERSION: 1})
    stop = asyncio.Event()
    passes = asyncio.create_task(recover_periodically(restify, stop, every=0.05))
    try:
        deadline = time.monotonic() + START_WAIT
        while await posts.find_by_id(dead) is not None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # a few more passes
    finally:
        stop.set()
        await passes
    assert [d["title"] for d in await posts.find(Filter())] == ["being written"]
    assert await journal.end(under_way) is True  # its entry was left whole
    assert await db.collection(JOURNAL).count(Filter()) == 0
