"""The Motor client, built from a URI; one per event loop.

Every operation is bounded by pymongo's client-side operation timeout (`timeoutMS`):
server selection, connection checkout and socket reads together, so a stopped server
(alive but silent) fails the call in time instead of leaving it waiting on a read.
"""
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo.errors import OperationFailure, PyMongoError
from pymongo.uri_parser import parse_uri

from storage import counts
from storage.changes import Change, Watcher, catch_up, head
from storage.collection import Collection
from storage.writes import _SESSION
from storage.counters import Counters
from storage.deliveries import Deliveries
from storage.files import GridFSDisk
from storage.guard import unavailable_as_error
from storage.indexes import IndexSupport, index_support, profile_name
from storage.journal import Journal
from storage.outbox import Outbox

log = logging.getLogger("restify.storage")
DEFAULT_DATABASE = "restify"
_NAMESPACE_NOT_FOUND = 26
DEFAULT_TIMEOUT_MS = 2000
T = TypeVar("T")


def has_transactions(hello: dict[str, Any]) -> bool:
    """Whether the server that answered `hello` runs multi-document transactions: a replica set
    member (it names its set) or a mongos (`msg: "isdbgrid"`). A standalone mongod and the
    embedded server do not."""
    return bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"


def database_name(uri: str, fallback: str | None = None) -> str:
    """The database the URI names (`mongodb://host/mydb`), else `fallback`, else "restify"."""
    return parse_uri(uri).get("database") or fallback or DEFAULT_DATABASE


class Database:
    """`name` is used as given; without one, the URI's database (see `database_name`).

    `timeout_ms` bounds every operation; None leaves operations unbounded, for long-lived
    readers such as change-stream watchers, which open their own `Database` that way.

    `profile` (`database.profile`: "auto", "mongodb" or "embedded") decides whose query shapes
    are sent: see storage/indexes.py."""

    def __init__(self, uri: str, name: str | None = None, listeners: list[Any] | None = None,
                 timeout_ms: int | None = DEFAULT_TIMEOUT_MS, profile: str = "auto") -> None:
        self.uri = uri
        self.profile = profile_name(profile)
        self.name = name or database_name(uri)
        bounds: dict[str, Any] = {} if timeout_ms is None else {
            "timeoutMS": timeout_ms, "serverSelectionTimeoutMS": timeout_ms}
        self._client = AsyncIOMotorClient(uri, event_listeners=listeners or [], tz_aware=True, **bounds)
        self._db = self._client[self.name]
        self._collections: dict[str, Collection] = {}
        self._watchers: dict[str, Watcher] = {}
        self._transactions: bool | None = None
        self._support: IndexSupport | None = None

    def collection(self, name: str) -> Collection:
        if name not in self._collections:
            self._collections[name] = Collection(self._db[name], self.index_support)
        return self._collections[name]

    def counters(self, name: str) -> Counters:
        """Atomic fixed-window counters kept in the collection `name` (throttles)."""
        return Counters(self._db[name])
    def watcher(self, name: str, idle_seconds: float = 0.05, pre_images: bool = False) -> Watcher:
        """The one change-stream watcher of collection `name` in this process."""
        if name not in self._watchers:
            self._watchers[name] = Watcher(self._db[name], idle_seconds, pre_images)
        return self._watchers[name]

    async def keep_pre_images(self, names: list[str]) -> None:
        """Asks MongoDB 6.0+ to keep each collection's pre-images (`changeStreamPreAndPostImages`), which
        change streams then give as `fullDocumentBeforeChange`; a server that cannot is logged, not fatal."""
        for name in names:
            option = {"changeStreamPreAndPostImages": {"enabled": True}}
            try:
                try:
                    await self._db.command({"collMod": name, **option})
                except OperationFailure as error:
                    if error.code != _NAMESPACE_NOT_FOUND:
                        raise
                    await self._db.command({"create": name, **option})
            except PyMongoError as error:
                log.warning("collection %s keeps no pre-images: %s", name, error)

    async def changes_since(self, name: str, token: str, limit: int = 1000, pre_images: bool = False) -> list[Change]:
        """The changes to `name` after `token`, up to now (HistoryLost for a token it cannot resume)."""
        return await catch_up(self._db[name], token, limit, pre_images)

    async def position(self, name: str) -> str | None:
        """The token a change stream of `name` opened now would start after."""
        return await head(self._db[name])

    def outbox(self) -> Outbox:
        """The mail outbox and its sender's lease (storage/outbox.py)."""
        return Outbox(self._db)

    def deliveries(self) -> Deliveries:
        """The webhooks' deliveries, cursors and senders' leases (storage/deliveries.py)."""
        return Deliveries(self._db)

    def journal(self) -> Journal:
        """The bulk journal (storage/journal.py): how bulk writes are made whole without transactions."""
        return Journal(self._db, self.collection)

    @unavailable_as_error
    async def transactions(self) -> bool:
        """Whether the server runs transactions (`has_transactions`), asked once."""
        if self._transactions is None:
            self._transactions = has_transactions(await self._db.command("hello"))
        return self._transactions

    @unavailable_as_error
    async def in_transaction(self, work: Callable[[], Awaitable[T]]) -> T:
        """Runs `work` in one transaction, on a server that has them: every write a `Collection` of this
        database makes in `work` (in this task) joins it; committed when `work` returns, aborted when
        it raises. The driver runs `work` again after a transient conflict (another transaction wrote
        the same record), so `work` must be safe to repeat from its start."""
        async with await self._client.start_session() as session:
            async def joined(_: Any) -> T:
                token = _SESSION.set(session)
                try:
                    return await work()
                finally:
                    _SESSION.reset(token)

            try:
                return await session.with_transaction(joined)
            finally:  # what the transaction wrote is seen (or undone) now: kept counts are stale
                counts.transaction_ended()

    def gridfs(self, bucket: str = "files") -> "GridFSDisk":
        return GridFSDisk(self._db, bucket)

    @unavailable_as_error
    async def ping(self) -> None:
        """Raises `Unavailable` when the server does not answer (readiness probes)."""
        await self._db.command("ping")

    @unavailable_as_error
    async def drop(self) -> None:
        await self._client.drop_database(self.name)

    async def index_support(self) -> IndexSupport:
        """What the server does with indexes (the embedded one renames them, among others), and whose
        shapes it is sent under the profile; asked once."""
        if self._support is None:
            self._support = await index_support(self._db, self.profile)
        return self._support

    def close(self) -> None:
        self._client.close()


def connect(uri: str, name: str | None = None, listeners: list[Any] | None = None,
            timeout_ms: int | None = DEFAULT_TIMEOUT_MS, profile: str = "auto") -> Database:
    """`timeout_ms` bounds every operation, from server selection to the last byte read; `profile`
    is `database.profile` (ValueError for a value it does not know)."""
    return Database(uri, name, listeners, timeout_ms, profile)
