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


async def test_a_subscriber_that_joined_later_was_not_sent_what_its_view_was_sent_before(restify, db):
    """What the members of a view were sent is kept once for the view: a member that joined after a
    record went out does not hold it, so a delete without a pre-image reaches only the earlier one."""
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    early = await feeds(restify).subscribe("posts", guest)
    late = None
    try:
        sent = await db.collection("posts").insert({"title": "seen"})
        assert (await early.next(WAIT)).kind == "created"
        late = await feeds(restify).subscribe("posts", guest)
        assert late.view == early.view
        channel = feeds(restify)._channels["posts"]
        offered: dict[str, list] = {"early": [], "late": []}
        early.attach(lambda events: offered["early"].append(events) or True)
        late.attach(lambda events: offered["late"].append(events) or True)
        # One batch: a delete without a pre-image, then a new record.
        await channel([Change("delete", sent["id"], "t1", None),
                       Change("insert", "0123456789abcdef01234567", "t2",
                              {"id": "0123456789abcdef01234567", "title": "new"})])
        assert [[(e.kind, e.id) for e in events] for events in offered["early"]] == \
            [[("deleted", sent["id"]), ("created", "0123456789abcdef01234567")]]
        assert [[(e.kind, e.id) for e in events] for events in offered["late"]] == \
            [[("created", "0123456789abcdef01234567")]]
        # Both hold the new record now: an update of it is one list of events, the same for both.
        await channel([Change("update", "0123456789abcdef01234567", "t3",
                              {"id": "0123456789abcdef01234567", "title": "newer"})])
        assert offered["early"][-1] is offered["late"][-1]
        assert [e.kind for e in offered["early"][-1]] == ["updated"]
        # And a delete without a pre-image reaches both, once.
        await channel([Change("delete", "0123456789abcdef01234567", "t4", None)])
        assert [e.kind for e in offered["early"][-1]] == [e.kind for e in offered["late"][-1]] == ["deleted"]
        await channel([Change("delete", "0123456789abcdef01234567", "t5", None)])
        assert len(offered["early"]) == len(offered["late"]) == 3
    finally:
        early.close()
        if late is not None:
            late.close()


async def test_a_subscribers_own_judgement_counts_when_it_is_the_later(restify, db):
    """A judgement of one subscriber alone (a catch-up) is noted on it, and a later change dealt to the
    whole view overrides it."""
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    subscription = await feeds(restify).subscribe("posts", guest)
    try:
        record = {"id": "0123456789abcdef01234567", "title": "replayed"}
        assert (await subscription.judge(Change("insert", record["id"], "t1", record), {})).kind == "created"
        channel = feeds(restify)._channels["posts"]
        offered: list = []
        subscription.attach(lambda events: offered.append(events) or True)
        await channel([Change("delete", record["id"], "t3", None)])   # no pre-image: it was sent the record
        assert [e.kind for e in offered[-1]] == ["deleted"]
        assert await subscription.judge(Change("delete", record["id"], "t4", None), {}) is None
    finally:
        subscription.close()
