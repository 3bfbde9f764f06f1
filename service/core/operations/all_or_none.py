"""Many writes as one: all of them or none.

On a server with transactions (a replica set, mongos) the writes run in one transaction, so a
failure aborts them all. Elsewhere (the embedded server, whose transactions are not isolated, and a
standalone mongod, which has none) a journal entry (storage/journal.py) says what the bulk write
will do before its first write and is removed after its last: a failed write takes back what the
others wrote, and what a crash leaves is taken back by `recover` (at `restify serve`'s start and once
a minute, for entries older than `bulk.recover_after_seconds`). Taking back never undoes another
writer's later work, and never brings back a record another writer deleted. Updates and deletes
happen only at the version each record was read at (a record changed since: 412), so the journal's
copy of each is exactly what the write replaces. Readers may see the records of a bulk write that
is then taken back.
"""
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from service.core.declarations import Resource, Restify
from service.core.kernel import ServiceUnavailable, ValidationFailed
from storage import Entry, Journal, Step, Unavailable

log = logging.getLogger("restify.bulk")
TOO_SLOW = "The bulk write took too long and was taken back."
T = TypeVar("T")
R = TypeVar("R")


def keyed(index: int, errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """Item `index`'s field errors, keyed `"<index>.<field>"` in the answer of a many-record write."""
    return {f"{index}.{name}": messages for name, messages in errors.items()}


def recover_after(app: Restify) -> float:
    """Seconds after which an unfinished bulk write's journal entry is taken back: longer than any
    bulk write may take (one still writing at half of it stops and takes itself back)."""
    return float(app.settings.get("bulk", "recover_after_seconds"))


async def _in_order(items: Sequence[T], write: Callable[[T], Awaitable[R]]) -> list[R]:
    """`write` for each item in order; a 422 is keyed by the failing item."""
    done: list[R] = []
    for index, item in enumerate(items):
        try:
            done.append(await write(item))
        except ValidationFailed as failure:
            raise ValidationFailed(keyed(index, failure.errors)) from None
    return done


async def whole(app: Restify, resource: Resource, action: str, steps: Sequence[Step], items: Sequence[T],
                 write: Callable[[T, str | None], Awaitable[R]]) -> list[R]:
    """`write` for each item (`steps[i]` says how item i's record comes back), all or none: in one
    transaction where the server has them, else under a journal entry, taken back when a write
    fails. `write` gets the entry's id (None in a transaction, and for a single item).
    A single item is one record's write, whole by itself as any single write is: it needs neither
    (a journal entry would add two writes to the one it guards)."""
    db = app.db

    def unjournaled() -> Awaitable[list[R]]:
        return _in_order(items, lambda item: write(item, None))

    if len(items) == 1:
        return await unjournaled()
    if await db.transactions():
        return await db.in_transaction(unjournaled)
    journal = db.journal()
    entry = await journal.begin(resource.collection, action, steps)
    deadline = time.monotonic() + recover_after(app) / 2
    attempted = 0

    async def journaled(item: T) -> R:
        nonlocal attempted
        if time.monotonic() > deadline:  # recovery may take this entry soon: no more writes
            raise ServiceUnavailable(TOO_SLOW)
        attempted += 1
        return await write(item, entry.id)

    try:
        done = await _in_order(items, journaled)
        ended = await journal.end(entry)
    except BaseException as failure:
        await _take_back(journal, entry, entry.steps[:attempted], failure)
        raise
    if not ended:  # recovery claimed the entry: whatever it took back, this takes back the rest
        await _take_back(journal, entry, entry.steps)
        raise ServiceUnavailable(TOO_SLOW)
    return done


async def _take_back(journal: Journal, entry: Entry, steps: Sequence[Step], failure: BaseException | None = None
                     ) -> None:
    """Takes back the steps a failed bulk write took, then removes its entry, unless the database
    failed (on the way back, or on the write itself: a write that timed out may still land), or the
    request was cancelled mid-write: then the entry stays, and recovery finishes the job."""
    refused = failure is None or (isinstance(failure, Exception) and not isinstance(failure, Unavailable))
    try:
        if await journal.undo(entry, steps) and refused:
            await journal.discard(entry)
    except Exception:
        log.exception("bulk write %s: not taken back; its journal entry is left for recovery", entry.id)


async def recover(app: Restify, older_than: float | None = None) -> int:
    """Takes back the bulk writes whose journal entries are older than `older_than` seconds (default
    `bulk.recover_after_seconds`): their processes died mid-write. How many were taken back."""
    return await app.db.journal().recover(recover_after(app) if older_than is None else older_than)
