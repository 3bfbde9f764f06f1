"""Sent deliveries do not pile up: past `webhooks.keep_sent_seconds` they are pruned, except each record's
latest, which numbers the record's next delivery; waiting and failed ones are never pruned."""
import time

import pytest
from motor.motor_asyncio import AsyncIOMotorClient

from service.core.declarations import Webhook
from service.webhooks import deliver, place
from tests.webhooks.conftest import EVENTS, SECRET, hook

DAY = 86_400.0


@pytest.fixture
def stored(mongodb_uri, db_name):
    """The deliveries collection through a plain Motor client: what is in the database."""
    client = AsyncIOMotorClient(mongodb_uri)
    yield client[db_name]["webhook_deliveries"]
    client.close()


async def test_only_sent_deliveries_that_are_not_their_records_latest_are_pruned(restify, stored):
    deliveries = restify.db.deliveries()
    await deliveries.prepare()
    made = [{"id": f"d{record}{sequence}", "record": f"r{record}", "sequence": sequence, "order": order,
             "event": "posts.updated", "payload": {"data": {}}}
            for order, (record, sequence) in enumerate([(1, 1), (1, 2), (2, 1), (3, 1), (4, 1), (5, 1), (5, 2)])]
    await deliveries.capture("w", made, "token", len(made), now=100.0)
    for id, at in (("d11", 100.0), ("d12", 100.0), ("d21", 900.0), ("d51", 100.0)):
        await deliveries.sent(id, now=at)
    await deliveries.fail("d31", "refused", now=100.0)  # failed, old: kept for `webhooks:replay`
    # d41 and d52 wait: d51, sent long ago, is not its record's latest (d52 is), so it goes.

    assert await deliveries.prune_sent("w", before=500.0) == 2
    kept = {d["_id"] for d in await stored.find({"webhook": "w"}, {"_id": 1}).to_list(None)}
    assert kept == {"d12", "d21", "d31", "d41", "d52"}
    assert await deliveries.prune_sent("w", before=500.0) == 0
    assert await deliveries.prune_sent("another", before=10_000.0) == 0


async def test_a_sender_prunes_old_sent_deliveries_and_numbers_on_from_the_kept_latest(api, restify, registry,
                                                                                      receiver, ann, stored):
    hook(registry, "posts", Webhook(receiver.url, events=EVENTS, secret=SECRET))
    await place(restify)
    webhook = restify.registry.resources["posts"].webhooks[0]
    key = webhook.key("posts")
    post = (await api.post("/api/restify/posts", {"title": "One"}, token=ann["token"])).json["data"]
    assert (await api.patch(f"/api/restify/posts/{post['id']}", {"title": "Two"}, token=ann["token"])).status == 200
    start = time.time()
    assert await deliver(restify, restify.registry.resources["posts"], webhook, now=start) == 2
    later = start + 8 * DAY  # past the week sent deliveries are kept by default
    assert await deliver(restify, restify.registry.resources["posts"], webhook, now=later) == 0
    left = await stored.find({"webhook": key}).to_list(None)
    assert [(d["record"], d["sequence"], d["state"]) for d in left] == [(post["id"], 2, "sent")]

    assert (await api.patch(f"/api/restify/posts/{post['id']}", {"title": "Three"}, token=ann["token"])).status == 200
    assert await deliver(restify, restify.registry.resources["posts"], webhook, now=later + 60) == 1
    assert [(r.json["sequence"], r.json["data"]["attributes"]["title"]) for r in receiver.accepted()] == [
        (1, "One"), (2, "Two"), (3, "Three")]
