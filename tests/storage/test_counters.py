"""Fixed-window counters (login and registration throttles), proved on the embedded server and,
with `MONGODB_URI=...`, on a real MongoDB: parallel hits each get their own number."""
import asyncio

from storage import Filter

WINDOW = 60
NOW = 1_800_000_030.5  # 30.5 s into a window that starts at 1_800_000_000


async def test_parallel_hits_each_get_a_distinct_count(db):
    counters = db.counters("throttle")
    hits = await asyncio.gather(*(counters.hit("account:ann", WINDOW, now=NOW) for _ in range(40)))
    assert sorted(hit.count for hit in hits) == list(range(1, 41))
    assert await counters.count("account:ann", WINDOW, now=NOW) == 40


async def test_a_hit_knows_when_its_window_ends(db):
    hit = await db.counters("throttle").hit("account:ann", WINDOW, now=NOW)
    assert (hit.count, hit.ends) == (1, 1_800_000_060)
    assert hit.seconds_left(now=NOW) == 30
    assert hit.seconds_left(now=1_800_000_059.9) == 1
    assert hit.seconds_left(now=1_800_000_100) == 1


async def test_keys_and_windows_count_separately(db):
    counters = db.counters("throttle")
    await counters.hit("account:ann", WINDOW, now=NOW)
    await counters.hit("account:ann", WINDOW, now=NOW)
    assert (await counters.hit("account:bob", WINDOW, now=NOW)).count == 1
    assert await counters.count("account:ann", WINDOW, now=NOW) == 2
    assert (await counters.hit("account:ann", WINDOW, now=NOW + WINDOW)).count == 1  # the next window


async def test_take_back_undoes_one_hit_in_its_own_window(db):
    counters = db.counters("throttle")
    first = await counters.hit("address:1.2.3.4", WINDOW, now=NOW)
    await counters.hit("address:1.2.3.4", WINDOW, now=NOW)
    await counters.take_back(first)
    assert await counters.count("address:1.2.3.4", WINDOW, now=NOW) == 1
    await counters.take_back(first)
    await counters.take_back(first)  # never below zero
    assert await counters.count("address:1.2.3.4", WINDOW, now=NOW) == 0
    assert (await counters.hit("address:1.2.3.4", WINDOW, now=NOW)).count == 1


async def test_clear_forgets_a_key_in_every_window_and_nothing_else(db):
    counters = db.counters("throttle")
    await counters.hit("account:ann", WINDOW, now=NOW + WINDOW)  # a later window first: no sweep
    await counters.hit("account:ann", WINDOW, now=NOW)
    await counters.hit("account:bob", WINDOW, now=NOW)
    await counters.clear("account:ann")
    assert await counters.count("account:ann", WINDOW, now=NOW) == 0
    assert await counters.count("account:ann", WINDOW, now=NOW + WINDOW) == 0
    assert await counters.count("account:bob", WINDOW, now=NOW) == 1


async def test_the_first_hit_of_a_window_sweeps_windows_that_ended(db):
    counters = db.counters("throttle")
    await counters.hit("address:old", WINDOW, now=NOW - 10 * WINDOW)
    await counters.hit("account:ann", WINDOW, now=NOW)
    assert await db.collection("throttle").count(Filter(equals={"key": "address:old"})) == 0
    assert await db.collection("throttle").count(Filter(equals={"key": "account:ann"})) == 1


async def test_fresh_keys_in_a_burst_sweep_once_a_minute_not_once_each(db):
    from storage.counters import SWEEP_EVERY_SECONDS
    counters = db.counters("throttle")
    await counters.hit("address:old", WINDOW, now=NOW - 10 * WINDOW)
    await counters.hit("account:first", WINDOW, now=NOW)  # sweeps address:old
    await counters.hit("address:stale", WINDOW, now=NOW - 10 * WINDOW)  # an ended window, left for the next sweep
    for n in range(20):  # a fresh key each time, as a client sending a new email with every request
        await counters.hit(f"account:{n}", WINDOW, now=NOW + 1)
    throttle = db.collection("throttle")
    assert await throttle.count(Filter(equals={"key": "address:old"})) == 0
    assert await throttle.count(Filter(equals={"key": "address:stale"})) == 1
    await counters.hit("account:later", WINDOW, now=NOW + SWEEP_EVERY_SECONDS)
    assert await throttle.count(Filter(equals={"key": "address:stale"})) == 0
