"""The mail outbox: messages waiting to be sent, and the lease that lets one sender at a time send them.

A message is one document of `mail_outbox` (`to`, `subject`, `text`, `html`, `attempts`, `next_at`
in seconds since the epoch, `state` "waiting" or "failed", `last_error`). It is removed once sent;
until then it stays, however many attempts fail, so nothing is lost. The lease is one document of
`leases` (`_id` the lease's name, `holder`, `until`): a process sends only while it holds it, and
takes it over only once it ran out, so two processes never send the same message twice at once.
"""
import time
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from storage.guard import unavailable_as_error
from storage.ids import to_object_id, to_plain

OUTBOX = "mail_outbox"
LEASES = "leases"
WAITING, FAILED = "waiting", "failed"


class Outbox:
    def __init__(self, motor_database: Any) -> None:
        self._col = motor_database[OUTBOX]
        self._leases = motor_database[LEASES]

    @unavailable_as_error
    async def add(self, message: dict[str, Any], now: float | None = None) -> str:
        """Stores a message to send as soon as a sender gets to it; its id."""
        moment = time.time() if now is None else now
        document = {**message, "state": WAITING, "attempts": 0, "next_at": moment, "created_at": moment,
                    "last_error": None}
        result = await self._col.insert_one(document)
        return str(result.inserted_id)

    @unavailable_as_error
    async def claim(self, name: str, holder: str, seconds: float, now: float | None = None) -> bool:
        """Takes or renews the lease `name` for `seconds`; False while another holder's is running."""
        moment = time.time() if now is None else now
        query = {"_id": name, "$or": [{"until": {"$lte": moment}}, {"holder": holder}]}
        try:
            # Missing, the lease is inserted (the query's `_id` is copied into it); held by another and
            # running, the insert collides with it: an error on MongoDB, None on the embedded server.
            found = await self._leases.find_one_and_update(
                query, {"$set": {"holder": holder, "until": moment + seconds}}, upsert=True,
                return_document=ReturnDocument.AFTER)
        except DuplicateKeyError:
            return False
        return found is not None and found.get("holder") == holder

    @unavailable_as_error
    async def release(self, name: str, holder: str) -> None:
        await self._leases.delete_one({"_id": name, "holder": holder})

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
    async def postpone(self, id: str, next_at: float, error: str, now: float | None = None) -> None:
        """One failed attempt: the message waits until `next_at`."""
        moment = time.time() if now is None else now
        await self._col.update_one({"_id": to_object_id(id)}, {
            "$set": {"next_at": next_at, "last_error": error, "last_attempt_at": moment}, "$inc": {"attempts": 1}})

    @unavailable_as_error
    async def fail(self, id: str, error: str, now: float | None = None) -> None:
        """A message no attempt will send (refused for good, or retried for too long): kept, not retried."""
        moment = time.time() if now is None else now
        await self._col.update_one({"_id": to_object_id(id)}, {
            "$set": {"state": FAILED, "last_error": error, "last_attempt_at": moment}, "$inc": {"attempts": 1}})

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
