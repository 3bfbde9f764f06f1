"""Webhook deliveries: each change a webhook sends, stored before its first attempt, and each
webhook's place in its collection's change stream.

A delivery is one document of `webhook_deliveries`: `_id` the delivery id (the same on every
attempt), `webhook` (the webhook's key), `record`, `sequence` (1, 2, ... per webhook and record),
`order` (per webhook, the order of the changes), `event`, `payload`, `attempts`, `next_at`, `since`
(when its retries began: its capture, or its replay), `state` "waiting", "sent" or "failed",
`last_error`. A record's latest delivery is kept whatever its age: it numbers the record's next one and
says whether the webhook's reader last received it or its deletion; older sent ones are pruned after
a while (`prune_sent`).

A cursor is one document of `webhook_cursors`: `_id` the webhook's key, `token` (the resume token
after the last change captured), `order` (the next delivery's). Capturing is safe to repeat: a
delivery is upserted by its id, which the change's token determines, so reading the same changes
again after a crash adds nothing.
"""
import time
from typing import Any

from pymongo import ASCENDING, DESCENDING

from storage.attempts import FAILED, WAITING, Attempts
from storage.guard import unavailable_as_error
from storage.indexes import create_index
from storage.ids import to_plain

DELIVERIES, CURSORS = "webhook_deliveries", "webhook_cursors"
SENT = "sent"


class Deliveries(Attempts):
    def __init__(self, motor_database: Any) -> None:
        super().__init__(motor_database)
        self._col = motor_database[DELIVERIES]
        self._cursors = motor_database[CURSORS]

    async def prepare(self) -> None:
        """The indexes a sender's reads use: the waiting deliveries in order, a record's latest."""
        await create_index(self._col, (("webhook", 1), ("state", 1), ("order", 1)))
        await create_index(self._col, (("webhook", 1), ("record", 1), ("sequence", -1)))

    @unavailable_as_error
    async def cursor(self, webhook: str) -> dict[str, Any] | None:
        return await self._cursors.find_one({"_id": webhook})

    @unavailable_as_error
    async def begin(self, webhook: str, token: str | None) -> None:
        """Places a new webhook at `token` (its collection's position now); a placed one stays where it is."""
        await self._cursors.update_one({"_id": webhook}, {"$setOnInsert": {"token": token, "order": 0}},
                                       upsert=True)

    @unavailable_as_error
    async def capture(self, webhook: str, deliveries: list[dict[str, Any]], token: str | None, order: int,
                      now: float | None = None) -> None:
        """Stores `deliveries` (each with its `id`), then moves the webhook's cursor past them."""
        moment = time.time() if now is None else now
        for delivery in deliveries:
            fields = {key: value for key, value in delivery.items() if key != "id"}
            await self._col.update_one({"_id": delivery["id"]}, {"$setOnInsert": {
                **fields, "webhook": webhook, "state": WAITING, "attempts": 0, "next_at": moment, "since": moment,
                "created_at": moment, "last_error": None}}, upsert=True)
        await self._cursors.update_one({"_id": webhook}, {"$set": {"token": token, "order": order}})

    @unavailable_as_error
    async def find(self, id: str) -> dict[str, Any] | None:
        found = await self._col.find_one({"_id": id})
        return to_plain(found) if found is not None else None

    @unavailable_as_error
    async def last(self, webhook: str, record: str) -> dict[str, Any] | None:
        """The webhook's latest delivery of `record` (the highest sequence), whatever its state."""
        cursor = self._col.find({"webhook": webhook, "record": record}).sort("sequence", DESCENDING).limit(1)
        found = await cursor.to_list(length=1)
        return to_plain(found[0]) if found else None

    @unavailable_as_error
    async def waiting(self, webhook: str, limit: int) -> list[dict[str, Any]]:
        """The webhook's deliveries still to send, in the order of their changes."""
        cursor = self._col.find({"webhook": webhook, "state": WAITING}).sort("order", ASCENDING).limit(limit)
        return [to_plain(document) for document in await cursor.to_list(length=limit)]

    @unavailable_as_error
    async def sent(self, id: str, now: float | None = None) -> None:
        moment = time.time() if now is None else now
        await self._col.update_one({"_id": id}, {"$set": {"state": SENT, "sent_at": moment, "last_error": None},
                                                 "$inc": {"attempts": 1}})

    @unavailable_as_error
    async def prune_sent(self, webhook: str, before: float, limit: int = 1000) -> int:
        """Deletes up to `limit` of the webhook's deliveries sent before `before` that are not their record's
        latest (waiting and failed ones, and each record's latest, stay); how many."""
        cursor = self._col.find({"webhook": webhook, "state": SENT, "sent_at": {"$lt": before}},
                                {"record": 1, "sequence": 1}).sort("sent_at", ASCENDING).limit(limit)
        candidates = await cursor.to_list(length=limit)
        latest: dict[str, int] = {}
        for record in {document["record"] for document in candidates}:
            found = await self.last(webhook, record)
            latest[record] = int(found["sequence"]) if found is not None else 0
        ids = [document["_id"] for document in candidates
               if int(document["sequence"]) < latest.get(document["record"], 0)]
        if not ids:
            return 0
        result = await self._col.delete_many({"_id": {"$in": ids}, "state": SENT})
        return int(result.deleted_count)

    @unavailable_as_error
    async def failed(self) -> list[dict[str, Any]]:
        """Every delivery given up on, oldest first."""
        cursor = self._col.find({"state": FAILED}).sort("created_at", ASCENDING)
        return [to_plain(document) for document in await cursor.to_list(length=None)]

    @unavailable_as_error
    async def replay(self, ids: list[str] | None, now: float | None = None) -> int:
        """Puts failed deliveries (`ids`, or all of them) back in line, each with a new retry period; how many."""
        moment = time.time() if now is None else now
        query: dict[str, Any] = {"state": FAILED}
        if ids is not None:
            query["_id"] = {"$in": ids}
        result = await self._col.update_many(query, {"$set": {"state": WAITING, "next_at": moment, "since": moment}})
        return int(result.modified_count)
