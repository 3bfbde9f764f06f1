"""The bulk journal: what a bulk write will do, written before its first write and removed after its
last, so that a bulk write a failure or a crash leaves half done can be taken back whole.

Used where the server has no transactions (the embedded server, a standalone mongod; see
`Database.transactions`). An entry is one header document (`collection`, `action`, `started`,
`state`) and one document per record (`entry`, `index`, `id`, `before`, `version`), all in the
collection `bulk_journal`, written in one command (`entry` is the header's id as a string: the
embedded server matches ObjectIds only in `_id`). Taking a record back is conditioned on what the
bulk left, so it never undoes another writer's work:

    store   delete the record only while it is at version 1, as the bulk created it
    update  put `before` back only while the record is at `version` (what the bulk left) and
            carries the entry's id under BULK_MARK (so a change by another writer that happens to
            reach the same version number is not the bulk's)
    delete  re-create `before` only while no record has its id

so a step the bulk never took is left alone too, and taking back is safe to repeat: after a failure
(the bulk write itself), and by `recover` for entries older than a request can last (the process
died mid-write). Recovery first claims an entry (`state` "undoing"): a bulk write still under way
then fails to end it, and takes itself back.
"""
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bson import ObjectId

from storage.collection import Collection
from storage.errors import Stale, StorageError, Unavailable
from storage.guard import unavailable_as_error

JOURNAL = "bulk_journal"
WRITING, UNDOING = "writing", "undoing"
ACTIONS = ("store", "update", "delete")
log = logging.getLogger("restify.bulk")


@dataclass(frozen=True)
class Step:
    """One record of a bulk write: its id, the record as the bulk found it (`before`: update and
    delete) and the version the bulk leaves it at (store: 1; update: one more than `before`'s)."""
    id: str
    before: dict[str, Any] | None = None
    version: int | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    collection: str
    action: str                          # "store", "update" or "delete"
    steps: tuple[Step, ...]


class Journal:
    def __init__(self, motor_database: Any, collection: Callable[[str], Collection]) -> None:
        self._col = motor_database[JOURNAL]
        self._collection = collection

    @unavailable_as_error
    async def begin(self, collection: str, action: str, steps: Sequence[Step]) -> Entry:
        """Writes the entry of a bulk write about to start (nothing of it is written yet)."""
        assert action in ACTIONS, action
        entry, started = ObjectId(), time.time()
        header = {"_id": entry, "collection": collection, "action": action, "started": started, "state": WRITING}
        items = [{"entry": str(entry), "index": index, "id": step.id, "before": step.before, "version": step.version,
                  "started": started} for index, step in enumerate(steps)]
        await self._col.insert_many([header, *items], ordered=True)
        return Entry(str(entry), collection, action, tuple(steps))

    @unavailable_as_error
    async def end(self, entry: Entry) -> bool:
        """Removes the entry of a bulk write that wrote every record. False when recovery claimed it
        first: the bulk write is being (or has been) taken back, and must take itself back too."""
        if not (await self._col.delete_one({"_id": ObjectId(entry.id), "state": WRITING})).deleted_count:
            return False
        await self._col.delete_many({"entry": entry.id})
        return True

    @unavailable_as_error
    async def discard(self, entry: Entry) -> None:
        """Removes an entry once its bulk write is taken back."""
        await self._col.delete_many({"entry": entry.id})
        await self._col.delete_one({"_id": ObjectId(entry.id)})

    async def undo(self, entry: Entry, steps: Sequence[Step] | None = None) -> bool:
        """Takes back `steps` of the entry (every step when None), the last first, each as far as the
        rules above allow. False when the database failed on one: the entry must stay for a later
        recovery. A step that cannot come back (a unique value another record took since) is logged."""
        collection = self._collection(entry.collection)
        complete = True
        for step in reversed(steps if steps is not None else entry.steps):
            try:
                await _undo(collection, entry, step)
            except Unavailable as error:
                complete = False
                log.warning("bulk write %s: record %s not taken back yet: %s", entry.id, step.id, error)
            except StorageError as error:
                log.error("bulk write %s: record %s cannot be taken back: %s", entry.id, step.id, error)
        return complete

    @unavailable_as_error
    async def recover(self, older_than: float) -> int:
        """Takes back every bulk write whose entry is older than `older_than` seconds (its request
        cannot still be running), then removes the entry; returns how many were taken back. Younger
        entries are left alone: their bulk writes may be under way."""
        cutoff = time.time() - older_than
        taken_back = 0
        for header in await self._col.find({"state": {"$exists": True}, "started": {"$lt": cutoff}}).to_list(None):
            claimed = await self._col.find_one_and_update({"_id": header["_id"]}, {"$set": {"state": UNDOING}})
            if claimed is None:  # the bulk write ended meanwhile
                continue
            items = await self._col.find({"entry": str(header["_id"])}).sort("index", 1).to_list(None)
            entry = Entry(str(header["_id"]), header["collection"], header["action"],
                          tuple(Step(i["id"], i.get("before"), i.get("version")) for i in items))
            log.warning("taking back bulk %s of %d record(s) in %s, unfinished since %s", entry.action,
                        len(entry.steps), entry.collection, time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                           time.gmtime(header["started"])))
            if await self.undo(entry):
                await self.discard(entry)
                taken_back += 1
        await self._remove_orphans(cutoff)
        return taken_back

    async def _remove_orphans(self, cutoff: float) -> None:
        """Record documents whose header is gone: a bulk write ended (or was taken back) but stopped
        before removing them. Nothing to take back."""
        entries = {d["entry"] for d in await self._col.find({"entry": {"$exists": True}, "started": {"$lt": cutoff}},
                                                             {"entry": 1}).to_list(None)}
        if not entries:
            return
        alive = {str(d["_id"]) for d in await self._col.find({"_id": {"$in": [ObjectId(e) for e in entries]}},
                                                             {"_id": 1}).to_list(None)}
        if entries - alive:
            await self._col.delete_many({"entry": {"$in": list(entries - alive)}})


async def _undo(collection: Collection, entry: Entry, step: Step) -> None:
    if entry.action == "store":
        assert step.version is not None  # a stored record's step holds its first version
        try:
            await collection.remove(step.id, (step.version,))
        except Stale:  # changed by another writer since: theirs now
            pass
    elif entry.action == "update":
        assert step.before is not None and step.version is not None  # an update's step holds both
        await collection.put_back(step.before, step.version, entry.id)
    else:
        assert step.before is not None  # a delete's step holds the record deleted
        await collection.recreate(step.before)

