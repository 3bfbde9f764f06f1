"""The Motor client, built from a URI; one per event loop."""
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import monitoring
from pymongo.uri_parser import parse_uri

from storage.changes import Change, Watcher, catch_up
from storage.collection import Collection
from storage.files import GridFSDisk
from storage.guard import unavailable_as_error

DEFAULT_DATABASE = "restify"


class Database:
    def __init__(self, uri: str, name: str | None = None, listeners: list[Any] | None = None,
                 timeout_ms: int = 5000) -> None:
        self.uri = uri
        self.name = name or parse_uri(uri).get("database") or DEFAULT_DATABASE
        self._client = AsyncIOMotorClient(
            uri,
            event_listeners=listeners or [],
            serverSelectionTimeoutMS=timeout_ms,
            tz_aware=True,
        )
        self._db = self._client[self.name]
        self._collections: dict[str, Collection] = {}
        self._watchers: dict[str, Watcher] = {}

    def collection(self, name: str) -> Collection:
        if name not in self._collections:
            self._collections[name] = Collection(self._db[name])
        return self._collections[name]

    def watcher(self, name: str, idle_seconds: float = 0.05, pre_images: bool = False) -> Watcher:
        """The one change-stream watcher of collection `name` in this process."""
        if name not in self._watchers:
            self._watchers[name] = Watcher(self._db[name], idle_seconds, pre_images)
        return self._watchers[name]

    async def changes_since(self, name: str, token: str, limit: int = 1000, pre_images: bool = False) -> list[Change]:
        """The changes to `name` after `token`, up to now (HistoryLost for a token it cannot resume)."""
        return await catch_up(self._db[name], token, limit, pre_images)

    def gridfs(self, bucket: str = "files") -> "GridFSDisk":
        return GridFSDisk(self._db, bucket)

    @unavailable_as_error
    async def drop(self) -> None:
        await self._client.drop_database(self.name)

    def close(self) -> None:
        self._client.close()


def connect(uri: str, name: str | None = None, listeners: list[Any] | None = None,
            timeout_ms: int = 5000) -> Database:
    """`timeout_ms` bounds how long an operation waits for an unreachable server before failing."""
    return Database(uri, name, listeners, timeout_ms)


class CommandCounter(monitoring.CommandListener):
    """Counts the commands sent to the server, by name: used to prove batched loading."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, str]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        collection = event.command.get(event.command_name)
        self.commands.append((event.command_name, collection if isinstance(collection, str) else ""))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass

    def reset(self) -> None:
        self.commands.clear()

    def reads(self) -> list[tuple[str, str]]:
        return [c for c in self.commands if c[0] in ("find", "aggregate", "count", "getMore")]
