"""The mail outbox: messages waiting to be sent, and the lease that lets one sender at a time send them.

A message is one document of `mail_outbox` (`to`, `subject`, `text`, `html`, `attempts`, `next_at`
in seconds since the epoch, `state` "waiting" or "failed", `last_error`). It is removed once sent;
until then it stays, however many attempts fail, so nothing is lost. A process sends only while it
holds the sender's lease (storage/leases.py), so two never send the same message twice at once.
"""
import time
from typing import Any

from storage.guard import unavailable_as_error
from storage.ids import to_object_id, to_plain
from storage.attempts import FAILED, WAITING, Attempts

OUTBOX = "mail_outbox"


class Outbox(Attempts):
    """The messages; `postpone` and `fail` count their attempts, `claim` and `release` the sender's lease."""

    def __init__(self, motor_database: Any) -> None:
        super().__init__(motor_database)
        self._col = motor_database[OUTBOX]

    def _key(self, id: str) -> Any:
        return to_object_id(id)

    @unavailable_as_error
    async def add(self, message: dict[str, Any], now: float | None = None) -> str:
        """Stores a message to send as soon as a sender gets to it; its id."""
        moment = time.time() if now is None else now
        document = {**message, "state": WAITING, "attempts": 0, "next_at": moment, "created_at": moment,
                    "last_error": None}
        result = await self._col.insert_one(document)
        return str(result.inserted_id)

    @unavailable_as_error
    async def due(self, limit: int, now: float | None = None) -> list[dict[str, Any]]:
        """The waiting messages whose time has come, oldest first."""
        moment = time.time() if now is None else now
        cursor = self._col.find({"state": WAITING, "next_at": {"$lte": moment}}).sort("next_at", 1).limit(limit)
        return [to_plain(document) for document in await cursor.to_list(length=limit)]

    @unavailable_as_error
    async def sent(self, id: str) -> None:
        await self._col.delete_one({"_id": to_object_id(id)})

    @unavailable_as_error
    async def troubled(self) -> list[dict[str, Any]]:
        """Every message an attempt failed to send: given up on, or still being retried."""
        cursor = self._col.find({"attempts": {"$gt": 0}}).sort("created_at", 1)
        return [to_plain(document) for document in await cursor.to_list(length=None)]

    @unavailable_as_error
    async def waiting(self) -> list[dict[str, Any]]:
        cursor = self._col.find({"state": WAITING}).sort("created_at", 1)
        return [to_plain(document) for document in await cursor.to_list(length=None)]

    @unavailable_as_error
    async def retry_failed(self, now: float | None = None) -> int:
        """Puts the messages given up on back in line, to be sent at once; how many."""
        moment = time.time() if now is None else now
        result = await self._col.update_many({"state": FAILED}, {"$set": {"state": WAITING, "next_at": moment}})
        return int(result.modified_count)
