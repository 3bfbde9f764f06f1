"""Bulk writes are whole, whatever races them (docs/writes.md "Bulk writes"). The embedded server has no
transactions, so bulk writes are journaled: a failure takes back what the bulk write wrote, and never
another user's work done in the middle of it. The tests step in between two of a bulk write's writes
with a driver command listener (tests/interleave.py)."""
import asyncio
import time

import pytest

from service.core.operations import all_or_none
from storage import JOURNAL, Filter
from tests.interleave import Interleave, on_loop

PREFIX = "/api/restify"
TAKEN = {"message": "The given data was invalid.", "errors": {"2.name": ["The name has already been taken."]}}
TOO_SLOW = {"message": all_or_none.TOO_SLOW}


@pytest.fixture
def commands():
    """The test database's command listener (tests/conftest.py), able to step in between writes."""
    return Interleave()


@pytest.fixture(autouse=True)
def journaled(request, db, io_loop):
    """Every test but the one of the transaction path is about the journal, which a server with
    transactions (MONGODB_URI naming a replica set) does not use."""
    if "transactions" not in request.fixturenames and io_loop.run_sync(db.transactions):
        pytest.skip("bulk writes run in transactions on this server")


async def everything(db, collection: str) -> list[dict]:
    return await db.collection(collection).find(Filter(), sort=[("id", 1)])


async def journal_size(db) -> int:
    return await db.collection(JOURNAL).count(Filter())


async def create_tags(api, user, *names: str) -> list[str]:
    response = await api.post(f"{PREFIX}/tags/bulk", [{"name": n} for n in names], token=user["token"])
    assert response.status == 201, response.body
    return [d["id"] for d in response.json["data"]]


@pytest.mark.parametrize("meanwhile, left", [
    (lambda api, id, bob: api.delete(f"{PREFIX}/tags/{id}", token=bob["token"]), None),
    (lambda api, id, bob: api.patch(f"{PREFIX}/tags/{id}", {"name": "bob's"}, token=bob["token"]), "bob's"),
], ids=["deleted", "renamed"])
async def test_a_failing_bulk_update_leaves_what_another_user_did_to_a_record_it_wrote(api, db, ann, bob, commands,
                                                                                     meanwhile, left):
    a, b, c = await create_tags(api, ann, "a", "b", "c")
    before = await everything(db, "tags")
    loop, answers = asyncio.get_running_loop(), []
    # Once the bulk wrote `a` (its first findAndModify), before it writes `b`, Bob deletes or renames `a`.
    commands.before("findAndModify", "tags", 2, lambda: answers.append(on_loop(loop, meanwhile(api, a, bob)).status))
    # "y" is new when validated; the unique index refuses it at item 2, after items 0 and 1 wrote.
    response = await api.post(f"{PREFIX}/tags/bulk/update", [{"id": a, "name": "x"}, {"id": b, "name": "y"},
                                                             {"id": c, "name": "y"}], token=ann["token"])
    assert (response.status, response.json) == (422, TAKEN)
    assert answers in ([204], [200])
    after = {d["id"]: d for d in await everything(db, "tags")}
    assert [after.get(id) for id in (b, c)] == before[1:]  # taken back exactly
    assert (after[a]["name"] if a in after else None) == left  # Bob's work stands
    assert await journal_size(db) == 0


async def test_a_failing_bulk_store_leaves_a_record_another_user_changed_since(api, db, ann, bob, commands):
    loop, renamed = asyncio.get_running_loop(), []

    async def rename_a():
        a, = await db.collection("tags").find(Filter(equals={"name": "a"}))
        renamed.append((await api.patch(f"{PREFIX}/tags/{a['id']}", {"name": "bob's"}, token=bob["token"])).status)

    commands.before("insert", "tags", 2, lambda: on_loop(loop, rename_a()))
    response = await api.post(f"{PREFIX}/tags/bulk", [{"name": "a"}, {"name": "b"}, {"name": "b"}],
                              token=ann["token"])
    assert (response.status, response.json) == (422, TAKEN)
    assert renamed == [200]
    assert [(d["name"], d["_version"]) for d in await everything(db, "tags")] == [("bob's", 2)]
    assert await journal_size(db) == 0


async def test_a_bulk_write_is_journaled_while_it_writes_and_not_after(api, db, ann, commands, restify):
    loop, seen = asyncio.get_running_loop(), []

    async def look():
        seen.append((await db.collection("posts").count(Filter()), await journal_size(db),
                     await all_or_none.recover(restify)))

    commands.before("insert", "posts", 3, lambda: on_loop(loop, look()))
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": str(i)} for i in range(5)], token=ann["token"])
    assert response.status == 201, response.body
    # Mid-write: two records, the entry (a header and five record documents), and a recovery pass
    # (as the periodic one runs) that leaves the fresh entry alone.
    assert seen == [(2, 6, 0)]
    assert await db.collection("posts").count(Filter()) == 5
    assert await journal_size(db) == 0


async def test_a_bulk_write_whose_entry_recovery_takes_mid_write_takes_itself_back(api, db, ann, commands, restify):
    loop, taken = asyncio.get_running_loop(), []
    # As if the entry were older than bulk.recover_after_seconds: recovery takes back the first two
    # records; the bulk write then writes the rest, cannot end its entry, and takes them back.
    commands.before("insert", "posts", 3, lambda: taken.append(on_loop(loop, all_or_none.recover(restify, older_than=0))))
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": str(i)} for i in range(5)], token=ann["token"])
    assert (response.status, response.json, taken) == (503, TOO_SLOW, [1])
    assert await everything(db, "posts") == []
    assert await journal_size(db) == 0


@pytest.fixture
def quick_recovery(config):
    config["bulk"] = {"recover_after_seconds": 1}
    return config


async def test_a_bulk_write_past_half_of_recover_after_seconds_stops_and_takes_itself_back(quick_recovery, api, db,
                                                                                         ann, commands):
    commands.before("insert", "posts", 2, lambda: time.sleep(0.6))  # the database is slow, once
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": str(i)} for i in range(3)], token=ann["token"])
    assert (response.status, response.json) == (503, TOO_SLOW)
    assert await everything(db, "posts") == []
    assert await journal_size(db) == 0


@pytest.fixture
def transactions(db):
    """The transaction path of bulk writes, on the embedded server: it reports no transactions (bulk
    writes are journaled here), but accepts them, so the path runs; nothing else writes meanwhile,
    so their missing isolation does not matter."""
    db._transactions = True
    return db


async def test_on_a_server_with_transactions_a_bulk_write_runs_in_one_and_writes_no_journal(transactions, api, db,
                                                                                           ann):
    a, b, c = await create_tags(api, ann, "a", "b", "c")
    before = await everything(db, "tags")
    response = await api.post(f"{PREFIX}/tags/bulk/update", [{"id": a, "name": "x"}, {"id": b, "name": "y"},
                                                             {"id": c, "name": "y"}], token=ann["token"])
    assert (response.status, response.json) == (422, TAKEN)
    assert await everything(db, "tags") == before
    deleted = await api.request("DELETE", f"{PREFIX}/tags/bulk/delete", [a, b], token=ann["token"])
    assert deleted.status == 204
    assert [d["name"] for d in await everything(db, "tags")] == ["c"]
    assert "bulk_journal" not in await db._db.list_collection_names()


async def test_a_bulk_write_of_one_item_is_that_records_write_alone(api, db, ann, commands):
    """One record's write is whole by itself: no journal entry around it (two writes more on every call)."""
    stored = await api.post(f"{PREFIX}/tags/bulk", [{"name": "a"}], token=ann["token"])
    a = stored.json["data"][0]["id"]
    updated = await api.post(f"{PREFIX}/tags/bulk/update", [{"id": a, "name": "b"}], token=ann["token"])
    taken = await api.post(f"{PREFIX}/tags/bulk", [{"name": "b"}], token=ann["token"])
    deleted = await api.request("DELETE", f"{PREFIX}/tags/bulk/delete", [a], token=ann["token"])
    assert [stored.status, updated.status, taken.status, deleted.status] == [201, 200, 422, 204]
    assert taken.json == {**TAKEN, "errors": {"0.name": TAKEN["errors"]["2.name"]}}
    assert [name for name, collection in commands.commands if collection == JOURNAL] == []
    assert await everything(db, "tags") == []
