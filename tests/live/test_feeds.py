"""The feeds of the operations layer, without a door: limits that a door only reports."""
import asyncio

import pytest

from service.core.declarations.context import Context
from service.core.live.feeds import feeds
from service.core.live.subscription import ConsumerTooSlow
from storage import Change

# Seconds to wait for an event before failing: it bounds a hang, so it leaves room for a busy machine.
WAIT = 60.0


@pytest.mark.parametrize("config", [{"max_queue": 2}], indirect=True)
async def test_a_subscriber_that_does_not_keep_up_is_dropped_not_buffered(restify, db):
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    subscription = await feeds(restify).subscribe("posts", guest)
    for title in "abc":
        await db.collection("posts").insert({"title": title})

    async def dropped() -> None:
        while subscription.ended is None:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(dropped(), WAIT)
    with pytest.raises(ConsumerTooSlow):
        await subscription.next()
    assert feeds(restify).count() == 0  # its place is freed at once


async def test_the_watcher_runs_only_while_someone_listens(restify):
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    first = await feeds(restify).subscribe("posts", guest)
    second = await feeds(restify).subscribe("posts", guest)
    watcher = restify.db.watcher("posts")
    assert watcher.listening
    first.close()
    assert watcher.listening
    second.close()
    assert not watcher.listening
    await watcher.stopped()


async def test_without_a_pre_image_a_delete_reaches_only_subscribers_the_record_was_sent_to(restify, db):
    """MongoDB without pre-images gives a delete no document: the ids sent decide, so ids never leak."""
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    subscription = await feeds(restify).subscribe("posts", guest)
    try:
        sent = await db.collection("posts").insert({"title": "seen"})
        event = await subscription.next(WAIT)
        assert (event.kind, event.id) == ("created", sent["id"])
        never_sent = "0123456789abcdef01234567"
        assert await subscription.judge(Change("delete", never_sent, "t1", None), {}) is None
        deleted = await subscription.judge(Change("delete", sent["id"], "t2", None), {})
        assert (deleted.kind, deleted.body) == ("deleted", {"data": {"id": sent["id"], "type": "posts"}})
        assert await subscription.judge(Change("delete", sent["id"], "t3", None), {}) is None  # once
    finally:
        subscription.close()


async def test_subscribers_with_the_same_view_share_one_event(restify, db):
    """One judgement, one presentation and one event per view and change, whoever receives it."""
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    other = Context(door="rest", extras={"address": "127.0.0.2"})  # another guest sees alike
    subscriptions = [await feeds(restify).subscribe("posts", context) for context in (guest, guest, other)]
    try:
        assert len({s.view for s in subscriptions}) == 1
        await db.collection("posts").insert({"title": "shared"})
        events = [await s.next(WAIT) for s in subscriptions]
        assert events[0] is events[1] is events[2]
        assert events[0].made("sse", lambda: b"frame") is events[2].made("sse", lambda: b"other")
    finally:
        for subscription in subscriptions:
            subscription.close()
