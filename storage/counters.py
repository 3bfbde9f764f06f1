"""Fixed-window counters: one document per key and window, raised by one atomic `$inc`.

Throttles count an attempt *before* doing the work it guards, so N requests racing through
the same key each see their own number and no two see the same one. The document's `_id` is
`"<key>@<window start>"`, which makes the upsert of the first hit in a window idempotent
across processes and hosts. `ends` (seconds since the epoch) lets expired windows be swept
without a TTL index, which the embedded server does not run.
"""
import time
from dataclasses import dataclass
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from storage.guard import unavailable_as_error


# Expired windows are swept at most this often per collection and process: a sweep scans, and a
# client sending a fresh key with every request (a new email each time) must not buy one per request.
SWEEP_EVERY_SECONDS = 60
_last_sweep: dict[str, float] = {}


@dataclass(frozen=True)
class Hit:
    """One counted attempt: the count including it, and when its window ends."""

    id: str
    count: int
    ends: int

    def seconds_left(self, now: float | None = None) -> int:
        return max(1, int(self.ends - (time.time() if now is None else now)) + 1)


class Counters:
    def __init__(self, motor_collection: Any) -> None:
        self._col = motor_collection

    @unavailable_as_error
    async def hit(self, key: str, window_seconds: int, now: float | None = None) -> Hit:
        """Counts one attempt for `key` in the current window and returns the new count."""
        moment = time.time() if now is None else now
        window = max(1, int(window_seconds))
        start = int(moment // window) * window
        document_id = f"{key}@{start}"
        # `key` and `ends` sit in the query, not in `$setOnInsert` (which the embedded server
        # ignores): an upsert copies the query's equalities into the document it inserts.
        query = {"_id": document_id, "key": key, "ends": start + window}
        update = {"$inc": {"count": 1}}
        try:
            after = await self._col.find_one_and_update(query, update, upsert=True,
                                                        return_document=ReturnDocument.AFTER)
        except DuplicateKeyError:
            # Two first hits raced to insert the window's document; the loser's $inc applies now.
            after = await self._col.find_one_and_update(query, update, upsert=True,
                                                        return_document=ReturnDocument.AFTER)
        if after["count"] == 1 and self._sweep_due(moment):  # a new window: sweep the ones that ended
            await self._col.delete_many({"ends": {"$lte": int(moment)}})
        return Hit(document_id, int(after["count"]), start + window)

    def _sweep_due(self, moment: float) -> bool:
        last = _last_sweep.get(self._col.full_name)
        if last is not None and moment - last < SWEEP_EVERY_SECONDS:
            return False
        _last_sweep[self._col.full_name] = moment
        return True

    @unavailable_as_error
    async def take_back(self, hit: Hit) -> None:
        """Undoes one counted attempt (in the window it was counted in)."""
        await self._col.update_one({"_id": hit.id, "count": {"$gt": 0}}, {"$inc": {"count": -1}})

    @unavailable_as_error
    async def clear(self, key: str) -> None:
        """Forgets every attempt counted for `key`, in every window."""
        await self._col.delete_many({"key": key})

    @unavailable_as_error
    async def count(self, key: str, window_seconds: int, now: float | None = None) -> int:
        """The attempts counted for `key` in the current window (0 when none)."""
        moment = time.time() if now is None else now
        window = max(1, int(window_seconds))
        found = await self._col.find_one({"_id": f"{key}@{int(moment // window) * window}"})
        return int(found["count"]) if found else 0
