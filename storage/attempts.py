"""What the mail outbox and the webhook deliveries share: items tried until they succeed, each failed
attempt counted and the next one postponed, given up on after a while (kept, state "failed").

A subclass names its collection (`_col`) and how an id is stored (`_key`); the leases its sender
holds come with it (storage/leases.py).
"""
import time
from typing import Any

from storage.guard import unavailable_as_error
from storage.leases import Leases

WAITING, FAILED = "waiting", "failed"


class Attempts(Leases):
    _col: Any

    def _key(self, id: str) -> Any:
        return id

    @unavailable_as_error
    async def postpone(self, id: str, next_at: float, error: str, now: float | None = None) -> None:
        """One failed attempt: the item waits until `next_at`."""
        moment = time.time() if now is None else now
        await self._col.update_one({"_id": self._key(id)}, {
            "$set": {"next_at": next_at, "last_error": error, "last_attempt_at": moment}, "$inc": {"attempts": 1}})

    @unavailable_as_error
    async def fail(self, id: str, error: str, now: float | None = None) -> None:
        """An item no attempt will get through (refused for good, or retried for too long): kept, not retried."""
        moment = time.time() if now is None else now
        await self._col.update_one({"_id": self._key(id)}, {
            "$set": {"state": FAILED, "last_error": error, "last_attempt_at": moment}, "$inc": {"attempts": 1}})
