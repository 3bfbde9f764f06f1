"""Change streams: what was written to a collection, by anyone, on any process.

One `Watcher` per collection per process reads a change stream while someone listens, and hands
each batch of `Change`s to its listeners; after an error it reopens the stream from the last
token it saw, so nothing is lost or repeated. `catch_up` reads a private stream from a client's
own token up to now (resuming a feed).

The embedded server (nx-27017) differs from MongoDB, and this module is where that stops:
- its deletes carry the pre-delete document as `fullDocument` (MongoDB: only with pre-images);
- `fullDocument._id` is an internal object there: ids are always read from `documentKey`;
- a replace arrives as an update without `updateDescription` (both are "update" here);
- a `$match` with `$gt` or `$or` in the stream pipeline drops every event: the stream is opened
  without a pipeline and callers filter in the process;
- an idle getMore answers at once (MongoDB waits): the watcher sleeps between empty batches;
- any resume token is accepted silently, and one from the future suppresses every later event:
  a token is checked against the stream's current position before it is used;
- it keeps 1,000 changes of history per collection.
`tests/storage/test_changes.py` proves each of these on the server in use.
"""
import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from pymongo.errors import OperationFailure, PyMongoError

from storage.errors import StorageError, Unavailable
from storage.ids import to_plain
from storage.pre_images import pre_images

log = logging.getLogger("restify.changes")

# Server codes: InvalidResumeToken, ChangeStreamFatalError, ChangeStreamHistoryLost.
_HISTORY_LOST = {260, 280, 286}
# "The $changeStream stage is only supported on replica sets", and unknown-stage answers.
_UNSUPPORTED = {40573, 40324, 40415}
_OPERATIONS = {"insert": "insert", "update": "update", "replace": "update", "delete": "delete"}
_EMBEDDED_TOKEN = "nx:"
RETRY_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)


class ChangesUnsupported(StorageError):
    """The database offers no change streams (e.g. a standalone MongoDB, not a replica set)."""


class HistoryLost(StorageError):
    """A resume token the database does not know (any more): the caller must start afresh."""


@dataclass(frozen=True)
class Change:
    operation: str              # "insert" | "update" | "delete"
    id: str
    token: str                  # the resume token that comes right after this change
    document: dict | None       # as written (insert, update); as it was before a delete, when known
    before: dict | None = None  # an update's record as it was just before, when known (storage/pre_images.py)


Listener = Callable[[list[Change]], Awaitable[None]]


def _token_text(token: Any) -> str:
    data = token.get("_data") if isinstance(token, dict) else None
    return data if isinstance(data, str) else str(token)


def _embedded_position(token: str) -> int | None:
    if not token.startswith(_EMBEDDED_TOKEN):
        return None
    tail = token[len(_EMBEDDED_TOKEN):]
    return int(tail) if tail.isdigit() else None


def _change(event: dict[str, Any]) -> Change | None:
    operation = _OPERATIONS.get(event.get("operationType", ""))
    key = (event.get("documentKey") or {}).get("_id")
    if operation is None or key is None:
        return None  # drop, rename, invalidate: nothing a record feed can say
    source = event.get("fullDocumentBeforeChange") or event.get("fullDocument") if operation == "delete" \
        else event.get("fullDocument")
    prior = event.get("fullDocumentBeforeChange") if operation == "update" else None
    return Change(operation, str(key), _token_text(event["_id"]), _plain(source, key), _plain(prior, key))


def _plain(source: Any, key: Any) -> dict | None:
    if not isinstance(source, dict):
        return None
    return to_plain({**source, "_id": key})  # the embedded server's _id is an internal object


def _refusal(error: OperationFailure) -> StorageError | None:
    """What a failed open means to a caller: no change streams, an unknown token, or (None) a retry."""
    message = str(error).lower()
    if error.code in _UNSUPPORTED or "replica set" in message or "changestream" in message \
            and "not supported" in message:
        return ChangesUnsupported("this database offers no change streams (MongoDB needs a replica set)")
    if error.code in _HISTORY_LOST or "resume" in message:
        return HistoryLost(str(error))
    return None


class _Stream:
    """One open change stream, read a batch at a time."""

    def __init__(self, motor_collection: Any, pre_images: bool) -> None:
        self._col = motor_collection
        self._pre_images = pre_images
        self._cursor: Any = None
        self.token: str | None = None

    async def open(self, token: str | None = None) -> list[Change]:
        options: dict[str, Any] = {"full_document": "updateLookup"}
        if self._pre_images:
            options["full_document_before_change"] = "whenAvailable"
        if token is not None:
            options["resume_after"] = {"_data": token}
        await self.close()
        self._cursor = self._col.watch([], **options)
        try:
            return await self.batch()  # the stream is opened by its first read
        except OperationFailure as error:
            await self.close()
            refusal = _refusal(error)
            if refusal is None:
                raise
            raise refusal from error

    async def batch(self, limit: int = 1000) -> list[Change]:
        """What the server has now (one empty getMore ends it); [] when nothing happened."""
        changes: list[Change] = []
        while len(changes) < limit:
            event = await self._cursor.try_next()
            if event is None:
                break
            change = _change(event)
            if change is not None:
                changes.append(change)
        token = self._cursor.resume_token
        self.token = _token_text(token) if token is not None else self.token
        return changes

    async def close(self) -> None:
        cursor, self._cursor = self._cursor, None
        if cursor is not None:
            try:
                await cursor.close()
            except PyMongoError:  # the server is gone; so is the cursor
                pass


class Watcher:
    """The one change stream of a collection in this process, open while it has listeners."""

    def __init__(self, motor_collection: Any, idle_seconds: float = 0.05, pre_images: bool = False) -> None:
        self._col = motor_collection
        self.idle_seconds = idle_seconds
        self._pre_images = pre_images
        self._listeners: list[Listener] = []
        self._rests: dict[Listener, float] = {}  # a listener content with longer pauses says so
        self._task: asyncio.Task | None = None
        self._stopping: asyncio.Task | None = None
        self._opened: asyncio.Future | None = None
        self.token: str | None = None
        self.sound = False  # open, and read without an error since it last had one
        self._troubles: list[Callable[[], None]] = []

    def on_trouble(self, callback: Callable[[], None]) -> None:
        """Calls `callback` each time the stream fails or loses its place: until it is read again,
        changes may be missed or come late (the caller must stop trusting what it keeps in step)."""
        if callback not in self._troubles:
            self._troubles.append(callback)

    def forget_trouble(self, callback: Callable[[], None]) -> None:
        if callback in self._troubles:
            self._troubles.remove(callback)

    def _trouble(self) -> None:
        self.sound = False
        for callback in list(self._troubles):
            callback()

    @property
    def rest_seconds(self) -> float:
        """The pause between empty reads: the shortest any listener asks for."""
        return min(self._rests.values(), default=self.idle_seconds)

    @property
    def listening(self) -> bool:
        return bool(self._listeners)

    async def listen(self, listener: Listener, rest: float | None = None) -> None:
        """Adds a listener and returns once the stream is open: every change made after this
        returns reaches it (listening twice is listening once). ChangesUnsupported when the
        database has no change streams; Unavailable when it cannot be reached. `rest`: the pause
        between empty reads this listener is content with (never shorter than the watcher's own);
        the watcher pauses as long as its most demanding listener allows."""
        if listener not in self._listeners:
            self._listeners.append(listener)
        self._rests[listener] = self.idle_seconds if rest is None else max(rest, self.idle_seconds)
        if self._task is None or self._task.done():
            self._opened = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._run(self._opened))
        assert self._opened is not None  # made with the task, never cleared
        try:
            await asyncio.shield(self._opened)
        except BaseException:
            self.forget(listener)
            raise

    def forget(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
        self._rests.pop(listener, None)
        if not self._listeners and self._task is not None:
            self._task.cancel()
            self._stopping, self._task = self._task, None

    async def stopped(self) -> None:
        """Returns once a watcher left by its last listener has closed its stream."""
        if self._stopping is not None:
            await asyncio.gather(self._stopping, return_exceptions=True)

    async def _with_pre_images(self, changes: list[Change]) -> list[Change]:
        """The changes, each update with the pre-image a write of this process handed over when
        the stream gave none."""
        handed = pre_images(self._col.database.name, self._col.name)
        found = []
        for change in changes:
            if change.operation == "update" and change.before is None:
                before = await handed.take(change.id, change.document)
                if before is not None:
                    change = replace(change, before=before)
            found.append(change)
        return found

    async def _run(self, opened: asyncio.Future) -> None:
        stream = _Stream(self._col, self._pre_images)
        handed = pre_images(self._col.database.name, self._col.name)
        handed.watched = True
        failures = 0
        try:
            while self._listeners:
                try:
                    if not opened.done() or failures:
                        changes = await stream.open(stream.token)
                        if not opened.done():
                            opened.set_result(None)
                    else:
                        handed.reading()
                        changes = await stream.batch()
                    failures, self.sound = 0, True
                except ChangesUnsupported as error:
                    if not opened.done():
                        opened.set_exception(error)
                    return
                except HistoryLost:
                    log.warning("change stream of %s lost its place; reading from now on", self._col.name)
                    stream.token, failures = None, 1
                    self._trouble()
                    continue
                except (PyMongoError, StorageError) as error:
                    if not opened.done():
                        opened.set_exception(Unavailable(str(error)))
                        return
                    delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                    failures += 1
                    self._trouble()
                    log.warning("change stream of %s failed (%s); resuming in %.1fs", self._col.name, error, delay)
                    await asyncio.sleep(delay)
                    continue
                self.token = stream.token
                if changes:
                    changes = await self._with_pre_images(changes)
                    for listener in list(self._listeners):
                        await _deliver(listener, changes)
                else:
                    # The embedded server would answer at once; a write of this process ends the rest.
                    await handed.rest(self.rest_seconds)
        finally:
            self.sound = False
            if self._task is None or self._task is asyncio.current_task():
                handed.clear()
            if not opened.done():
                opened.cancel()
            await stream.close()


async def _deliver(listener: Listener, changes: list[Change]) -> None:
    try:
        await listener(changes)
    except Exception:  # one broken listener must not stop the others
        log.exception("change listener failed")


async def head(motor_collection: Any) -> str | None:
    """The collection's current position: the token a stream opened now starts after."""
    stream = _Stream(motor_collection, False)
    try:
        await stream.open()
    finally:
        await stream.close()
    return stream.token


async def catch_up(motor_collection: Any, token: str, limit: int = 1000, pre_images: bool = False) -> list[Change]:
    """The changes after `token` up to now, from a private stream. HistoryLost when the token is
    unknown or more than `limit` changes behind (the caller starts afresh)."""
    now = await head(motor_collection)
    mine, theirs = _embedded_position(token), _embedded_position(now or "")
    if theirs is not None and (mine is None or mine > theirs):
        # The embedded server would take it silently and start now, or never deliver again.
        raise HistoryLost(f"unknown resume token {token!r}")
    stream = _Stream(motor_collection, pre_images)
    changes: list[Change] = []
    try:
        batch = await stream.open(token)
        while batch:
            changes.extend(batch)
            if len(changes) > limit:
                raise HistoryLost(f"more than {limit} changes behind")
            batch = await stream.batch()
    finally:
        await stream.close()
    return changes
