"""Each user's writes are paced, so that one user cannot keep the database writing for everyone.

A user (a guest: the client address) has a bucket of `throttle.write_burst` records that refills at
`throttle.writes_per_minute`. A write takes one from it for each record it writes (a bulk of n items
takes n at once: it is admitted whole or not at all; an attach, a detach, a sync, an action or a
profile change takes one). A write that finds the bucket short by no more than PACE seconds of
refill takes its share at once and waits for it (the client is slowed, not refused); a longer
shortfall is refused with a 429 and Retry-After, after the login throttle's pause (REFUSAL_PAUSE): a
client that loops on refusals then sends one a second per connection instead of as fast as 429s can
be written.

Each process keeps its own buckets, in memory (with N processes a user may write up to N times as
fast): they bound what one user costs a process, they are not an exact quota. A bucket that is full
again is forgotten when the process keeps too many.
"""
import asyncio
import math
import time
from typing import TYPE_CHECKING

from service.core.declarations import Context, PerApplication
from service.core.identity.ratelimit import REFUSAL_PAUSE
from service.core.kernel import TooManyRequests
from service.core.reading import owner

if TYPE_CHECKING:
    from service.core.declarations import Restify

PACE = 1.0  # seconds a write may wait for its share
MAX_BUCKETS = 10_000  # past it, the full buckets are forgotten


class Buckets:
    """One application's write buckets in this process: owner -> (records left, when last counted)."""

    def __init__(self) -> None:
        self.left: dict[str, tuple[float, float]] = {}
        self.clock = time.monotonic  # what refills are read on (tests set theirs)
        self.sleep = asyncio.sleep

    def take(self, who: str, records: int, per_minute: int, burst: int) -> float:
        """Takes `records` from `who`'s bucket: the seconds to wait for them (at most PACE), or
        TooManyRequests when the bucket is short by more than that (nothing is taken then)."""
        now, rate = self.clock(), per_minute / 60
        left, then = self.left.get(who, (burst, now))
        left = min(burst, left + (now - then) * rate)
        wait = max(0.0, (records - left) / rate)
        if wait > PACE:
            self.left[who] = (left, now)
            raise TooManyRequests(
                f"Too many writes: each user may write {burst:,} records at once and "
                f"{per_minute:,} a minute (throttle.writes_per_minute). Try again in "
                f"{math.ceil(wait)} seconds.", retry_after=math.ceil(wait))
        if who not in self.left and len(self.left) >= MAX_BUCKETS:
            self._forget_full(now, rate, burst)
        self.left[who] = (left - records, now)  # below zero while it waits: the next write waits longer
        return wait

    def _forget_full(self, now: float, rate: float, burst: float) -> None:
        self.left = {who: (left, then) for who, (left, then) in self.left.items()
                     if left + (now - then) * rate < burst}
        if len(self.left) >= MAX_BUCKETS:
            self.left.clear()


buckets = PerApplication(Buckets)


async def pace_writes(app: "Restify", context: Context, records: int = 1) -> None:
    """Waits until `context`'s owner may write `records` records (at most PACE seconds), or raises
    TooManyRequests after a pause of REFUSAL_PAUSE seconds. No limit when `throttle.writes_per_minute` is unset."""
    per_minute = app.settings.cap("throttle", "writes_per_minute")
    if per_minute is None or records <= 0:
        return
    # A bulk of the largest size always fits in a full bucket, whatever the burst says.
    burst = max(app.settings.cap("throttle", "write_burst") or 1, app.settings.cap("bulk", "max_items") or 1)
    kept = buckets(app)
    try:
        wait = kept.take(owner(context), records, per_minute, burst)
    except TooManyRequests:
        await kept.sleep(REFUSAL_PAUSE)
        raise
    if wait > 0:
        await kept.sleep(wait)
