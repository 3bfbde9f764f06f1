"""Transactions: which servers run them (bulk writes use one there), how `Database.in_transaction`
joins the writes made in it, and why bulk writes do not use the embedded server's (docs/writes.md "Bulk
writes"): it accepts transactions, but they are not isolated — aborting one also takes back what
other clients wrote meanwhile. MongoDB isolates them (and needs a replica set or mongos for them)."""
import os

import pymongo
import pytest

from storage import Filter, has_transactions

EMBEDDED = not os.environ.get("MONGODB_URI")


@pytest.mark.parametrize("hello, expected", [
    ({"ok": 1, "isWritablePrimary": True, "maxWireVersion": 25}, False),  # a standalone mongod, the embedded server
    ({"ok": 1, "isWritablePrimary": True, "setName": "rs0", "hosts": ["a:27017"]}, True),  # a replica set member
    ({"ok": 1, "isWritablePrimary": True, "msg": "isdbgrid"}, True),  # mongos
])
def test_transactions_are_told_from_hello(hello, expected):
    assert has_transactions(hello) is expected


async def test_the_database_says_whether_its_server_runs_transactions(db, mongodb_uri):
    client = pymongo.MongoClient(mongodb_uri)
    try:
        hello = client.admin.command("hello")
    finally:
        client.close()
    assert await db.transactions() is has_transactions(hello)
    if EMBEDDED:
        assert await db.transactions() is False  # so bulk writes are journaled here


async def test_writes_in_a_transaction_are_committed_together_or_aborted_together(db):
    # The shape of the transaction path, on any server that accepts transactions (the embedded one
    # does, without isolation: nothing else writes to it during this test; a standalone mongod does not).
    if not EMBEDDED and not await db.transactions():
        pytest.skip("a standalone mongod runs no transactions")
    posts = db.collection("posts")

    async def two():
        await posts.insert({"title": "A"})
        await posts.swap((await posts.insert({"title": "B"}))["id"], {"title": "C"})

    await db.in_transaction(two)

    async def failing():
        await posts.insert({"title": "D"})
        raise RuntimeError("the second write fails")

    with pytest.raises(RuntimeError):
        await db.in_transaction(failing)
    assert sorted(d["title"] for d in await posts.find(Filter())) == ["A", "C"]


@pytest.mark.skipif(not EMBEDDED, reason="a fact about the embedded server")
def test_aborting_a_transaction_on_the_embedded_server_rolls_back_other_clients_writes(mongodb_uri, db_name):
    one, other = pymongo.MongoClient(mongodb_uri), pymongo.MongoClient(mongodb_uri)
    try:
        things = one[db_name].things
        things.insert_one({"n": 0})
        with one.start_session() as session:
            session.start_transaction()
            things.insert_one({"n": 1}, session=session)
            other[db_name].things.insert_one({"n": 2})  # another client, outside any transaction
            session.abort_transaction()
        assert sorted(d["n"] for d in things.find({})) == [0]  # the other client's write is gone too
    finally:
        one.close()
        other.close()
