"""Why bulk writes undo instead of using a transaction (README "Bulk writes"): the embedded server
accepts transactions, but they are not isolated — aborting one also takes back what other clients
wrote meanwhile. Embedded server only: MongoDB isolates them (and needs a replica set for them)."""
import os

import pymongo
import pytest

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="a fact about the embedded server")


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
