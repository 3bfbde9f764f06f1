"""The outbox's lease: one holder at a time, renewed by its holder, taken over once it ran out."""
import asyncio


async def test_of_many_racing_claims_one_wins(db):
    outbox = db.outbox()
    won = await asyncio.gather(*(outbox.claim("sender", f"host:{n}", 30, now=1000.0) for n in range(8)))
    assert won.count(True) == 1


async def test_the_holder_renews_and_others_wait_until_it_runs_out(db):
    outbox = db.outbox()
    assert await outbox.claim("sender", "a", 30, now=1000.0)
    assert not await outbox.claim("sender", "b", 30, now=1029.0)
    assert await outbox.claim("sender", "a", 30, now=1029.0)  # renewed: until 1059
    assert not await outbox.claim("sender", "b", 30, now=1058.0)
    assert await outbox.claim("sender", "b", 30, now=1059.0)
    assert not await outbox.claim("sender", "a", 30, now=1060.0)


async def test_a_released_lease_is_free_at_once(db):
    outbox = db.outbox()
    assert await outbox.claim("sender", "a", 30, now=1000.0)
    await outbox.release("sender", "b")  # not b's to release
    assert not await outbox.claim("sender", "b", 30, now=1001.0)
    await outbox.release("sender", "a")
    assert await outbox.claim("sender", "b", 30, now=1001.0)


async def test_messages_come_due_in_order_and_stay_until_sent(db):
    outbox = db.outbox()
    first = await outbox.add({"to": "a@example.com"}, now=100.0)
    second = await outbox.add({"to": "b@example.com"}, now=200.0)
    assert [m["id"] for m in await outbox.due(10, now=150.0)] == [first]
    await outbox.postpone(first, 400.0, "connection refused", now=150.0)
    assert [m["id"] for m in await outbox.due(10, now=300.0)] == [second]
    await outbox.sent(second)
    (waiting,) = await outbox.waiting()
    assert (waiting["id"], waiting["attempts"], waiting["last_error"]) == (first, 1, "connection refused")
    assert [m["id"] for m in await outbox.due(10, now=400.0)] == [first]
