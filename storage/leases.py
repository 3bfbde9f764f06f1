"""Leases: one document of `leases` per lease (`_id` its name, `holder`, `until` in seconds since the
epoch). A process does a lease's work only while it holds it, and takes it over only once it ran out,
so two processes never do the same work at once (the mail sender, each webhook's sender).
"""
import time
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from storage.guard import unavailable_as_error

LEASES = "leases"


class Leases:
    def __init__(self, motor_database: Any) -> None:
        self._leases = motor_database[LEASES]

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
