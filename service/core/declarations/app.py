"""The application core: settings, the loaded repositories, the database, passwords.

One instance serves every front door; it holds no request state.
"""
import asyncio
import copy
import logging
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from service.config import Settings
from service.core.declarations.indexes import index_plan, states, unique_plan
from service.core.declarations.registry import Registry, Resource
from service.core.kernel import NotFound, Passwords
from storage import Collection, Database, Disk, LocalDisk, Watcher, safe_path

log = logging.getLogger("restify")

T = TypeVar("T")


class Restify:
    _origin: "Restify"  # set on pinned views only (see `origin`)

    def __init__(self, settings: Settings, registry: Registry, db: Database) -> None:
        self.settings = settings
        self.registry = registry
        self.db = db
        self.passwords = Passwords(
            time_cost=int(settings.get("auth", "argon2_time_cost")),
            memory_kib=int(settings.get("auth", "argon2_memory_kib")),
            threads=settings.cap("auth", "hash_threads"),
            queue=int(settings.number("auth", "hash_queue")),
        )
        # The registries whose unique indexes exist; shared by every pinned view of this application.
        self._indexed: weakref.WeakSet[Registry] = weakref.WeakSet()
        self._index_lock = asyncio.Lock()
        root = settings.app_dir / settings.get("files", "root")
        self.disks: dict[str, Disk] = {"local": LocalDisk(root), "gridfs": db.gridfs()}

    def disk(self, name: str | None = None) -> Disk:
        return self.disks[name or self.settings.get("files", "disk")]

    def file_url(self, path: str) -> str:
        return f"{self.settings.get('files', 'url_prefix').rstrip('/')}/{path}"

    def file_path(self, url: str | None) -> str | None:
        """The disk path behind a stored file URL, or None for anything else."""
        prefix = self.settings.get("files", "url_prefix").rstrip("/") + "/"
        if not isinstance(url, str) or not url.startswith(prefix):
            return None
        try:
            return safe_path(url[len(prefix):])
        except ValueError:
            return None

    async def read_file(self, path: str) -> bytes | None:
        """A stored file from the configured disk first, then the others; None for a path that is not
        a plain stored one (`..`, odd characters)."""
        try:
            path = safe_path(path)
        except ValueError:
            return None
        default = self.settings.get("files", "disk")
        for name in sorted(self.disks, key=lambda n: n != default):
            data = await self.disks[name].get(path)
            if data is not None:
                return data
        return None

    def resource(self, name: str) -> Resource:
        found = self.registry.get(name)
        if found is None:
            raise NotFound()
        return found

    def collection(self, resource: Resource) -> Collection:
        return self.db.collection(resource.collection)

    def watcher(self, collection: str) -> Watcher:
        """The one change-stream watcher of `collection` in this process, as the `live` settings shape it
        (live feeds and the identity cache both follow it)."""
        return self.db.watcher(collection, float(self.settings.number("live", "idle_ms")) / 1000,
                               bool(self.settings.value("live", "pre_images")))

    @property
    def user_resource(self) -> Resource | None:
        return self.registry.get(self.settings.get("auth", "user_repository"))

    def swap_registry(self, registry: Registry) -> None:
        """Serve new repository definitions; operations in flight keep the registry they pinned."""
        self.registry = registry

    def pinned(self) -> "Restify":
        """This application with today's registry fixed, for one operation from start to end: a reload
        between two of its awaits cannot mix two registries. Everything else (settings, database,
        disks, hashing lane, index tracking) is shared with the application."""
        if "_origin" in self.__dict__:
            return self  # a pinned view: its registry is fixed already
        # Nothing is ever set on a view, so the one of today's registry serves every operation until a swap.
        view = self.__dict__.get("_pinned")
        if view is None or view.registry is not self.registry:
            view = copy.copy(self)
            view.__dict__.pop("_pinned", None)
            view._origin = self
            self._pinned = view
        return view

    @property
    def origin(self) -> "Restify":
        """The application itself, for a pinned view too: what state kept per application is keyed by."""
        return self.__dict__.get("_origin", self)

    async def ready(self) -> None:
        """Creates the registry's index plan (`service.core.declarations.indexes`; only the unique indexes that back
        `unique:` rules with `database.auto_indexes` off), once per registry: a registry is marked
        indexed only by the run that created its own indexes."""
        registry = self.registry
        if registry in self._indexed:
            return
        async with self._index_lock:
            if registry in self._indexed:
                return
            auto = self.settings.get("database", "auto_indexes")
            await states(self.db, index_plan(registry) if auto else unique_plan(registry), create=True)
            if self.settings.value("live", "pre_images"):  # live feeds judge updates on the image before
                await self.db.keep_pre_images([resource.collection for resource in registry.resources.values()])
            self._indexed.add(registry)


class PerApplication(Generic[T]):
    """State kept for each application, made by `make()` the first time one asks, whichever pinned view of
    it asks (`Restify.origin`), and dropped with the application."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._kept: "weakref.WeakKeyDictionary[Restify, T]" = weakref.WeakKeyDictionary()

    def __call__(self, app: Restify) -> T:
        found = self._kept.get(app.origin)
        if found is None:
            found = self._kept[app.origin] = self._make()
        return found
