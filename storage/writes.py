"""The writes of one collection: each one versions what it changes, joins the transaction the task
runs in, and marks what this process keeps about the collection (counts, revisions) as stale."""
import collections.abc as abc
import functools
import re
from contextvars import ContextVar
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from storage import counts
from storage.errors import DuplicateKey, Stale
from storage.filters import Filter
from storage.guard import unavailable_as_error
from storage.ids import to_object_id, to_plain
from storage.pre_images import pre_images, settle

T = TypeVar("T")
# Every swap adds one to a document's version; a document that never had one is version 0.
VERSION = "_version"
Versions = abc.Collection[int] | None  # the versions a write accepts (None: any)
# On a record a journaled bulk update wrote: the journal entry's id, so that taking the update back
# touches only what that bulk wrote (storage/journal.py).
BULK_MARK = "_bulk"
# The session of the transaction the current task runs in (`Database.in_transaction`): the writes
# below join it.
_SESSION: ContextVar[Any] = ContextVar("restify_session", default=None)


def _joined() -> dict[str, Any]:
    """The `session` argument of a write made inside a transaction; none outside one."""
    session = _SESSION.get()
    return {} if session is None else {"session": session}


def version_of(document: Mapping[str, Any]) -> int:
    return document.get(VERSION) or 0


def _versioned(oid: Any, versions: Versions) -> dict[str, Any]:
    """The filter of one document, at one of `versions` when given."""
    if versions is None:
        return {"_id": oid}
    accepted = sorted(set(versions))
    clause = {VERSION: {"$in": accepted}}
    return {"_id": oid, "$or": [{VERSION: {"$exists": False}}, clause]} if 0 in accepted else {"_id": oid, **clause}


_SQLITE_INDEX = re.compile(r"index '([^']+)'")


def _duplicate_field(error: DuplicateKeyError, collection: str) -> str | None:
    key = (error.details or {}).get("keyPattern") or (error.details or {}).get("keyValue") or {}
    if key:
        return next(iter(key))
    message = str(error)
    # Servers that omit keyPattern still name the index ("index: email_1 dup key").
    marker = "index: "
    if marker in message:
        index = message.split(marker, 1)[1].split(" ", 1)[0]
        return index.rsplit("_", 1)[0] or None
    # nx-27017 names its SQLite index instead: idx_<collection>_<field>
    sqlite = _SQLITE_INDEX.search(message)
    prefix = f"idx_{collection}_"
    if sqlite and sqlite.group(1).startswith(prefix):
        return sqlite.group(1)[len(prefix):] or None
    return None


def _stored(document: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """A plain document as stored (`id` back to `_id`), and its ObjectId (None: not a valid id)."""
    stored = dict(document)
    oid = to_object_id(stored.pop("id", None) or "")
    if oid is not None:
        stored["_id"] = oid
    return stored, oid


_ADDING = {"insert", "insert_many"}
_REMOVING = {"delete", "remove", "delete_where", "drop"}


def _writing(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """A write: once it is done (or failed, perhaps halfway), the counts kept for the collection are
    stale, and so is what this process remembers of documents it changed or removed (`revision`)."""
    adds, removes = method.__name__ in _ADDING, method.__name__ in _REMOVING

    @functools.wraps(method)
    async def wrapped(self: "Writes", *args: Any, **kwargs: Any) -> T:
        try:
            return await method(self, *args, **kwargs)
        finally:
            counts.wrote(self._col)
            pre_images(self._col.database.name, self.name).wrote()  # its change goes out now
            if not adds:
                self.revision += 1
            if removes:
                self.removals += 1
    return wrapped


class Writes:
    """What `Collection` writes; it reads through `Collection`'s own `_query`."""

    _col: Any
    name: str
    revision: int
    removals: int

    async def _query(self, where: Filter) -> dict[str, Any] | None:
        raise NotImplementedError

    @unavailable_as_error
    @_writing
    async def insert(self, document: Mapping[str, Any]) -> dict:
        stored = dict(document)
        chosen = to_object_id(stored.pop("id", None) or "")
        if chosen is not None:  # callers that needed the id early (file names) chose it
            stored["_id"] = chosen
        try:
            result = await self._col.insert_one(stored, **_joined())
        except DuplicateKeyError as error:
            raise DuplicateKey(_duplicate_field(error, self.name)) from None
        stored["_id"] = result.inserted_id
        return to_plain(stored)

    @unavailable_as_error
    @_writing
    async def insert_many(self, documents: Iterable[Mapping[str, Any]]) -> int:
        """Inserts `documents` in one command (seeders, benchmarks); how many were inserted."""
        stored = [dict(document) for document in documents]
        if not stored:
            return 0
        result = await self._col.insert_many(stored, ordered=True)
        return len(result.inserted_ids)

    async def update(self, id: str, values: Mapping[str, Any]) -> dict | None:
        """Set `values` on one document and return it as this write left it (None if gone)."""
        swapped = await self.swap(id, values)
        return swapped[1] if swapped else None

    @unavailable_as_error
    @_writing
    async def swap(self, id: str, values: Mapping[str, Any], versions: Versions = None) -> tuple[dict, dict] | None:
        """Set `values` atomically and add one to the version; (the document just before, the
        document as this write left it), None if there is no such document.

        The "before" is what this very write replaced, whatever other writers did meanwhile, so a
        caller can clean up exactly what it overwrote (an old file); the "after" shows the values
        it wrote, not a later writer's. With `versions`, the write changes the document only at one
        of them, in the same atomic step, and raises Stale when the document is at another.
        A change-stream watcher of this process gets the "before" as the change's pre-image."""
        slot = pre_images(self._col.database.name, self.name).expect(id)
        swapped = None
        try:
            swapped = await self._swap(id, values, versions)
        finally:
            settle(slot, swapped)
        return swapped

    async def _swap(self, id: str, values: Mapping[str, Any], versions: Versions) -> tuple[dict, dict] | None:
        oid = to_object_id(id)
        if oid is None:
            return None
        changes = dict(values)
        changes.pop(VERSION, None)
        where, update = _versioned(oid, versions), {"$set": changes, "$inc": {VERSION: 1}}
        try:
            before = await self._col.find_one_and_update(where, update, return_document=ReturnDocument.BEFORE,
                                                         **_joined())
            if before is None:
                # Nothing was changed: the embedded server answers a unique-index refusal with None
                # instead of an error, and update_one reports it (naming the field) if the conflict is
                # still there. Only a write that raised nothing and matched nothing is stale or gone.
                if (await self._col.update_one(where, update, **_joined())).matched_count:
                    after = to_plain(await self._col.find_one({"_id": oid}, **_joined()))
                    return (dict(after), after) if after else None
                await self._absent(oid, versions)
                return None
        except DuplicateKeyError as error:
            raise DuplicateKey(_duplicate_field(error, self.name)) from None
        before = to_plain(before)
        return before, {**before, **changes, VERSION: version_of(before) + 1}

    @unavailable_as_error
    @_writing
    async def change_set(self, id: str, key: str, operation: str, values: list[Any], changes: Mapping[str, Any],
                         versions: Versions = None) -> dict | None:
        """Add `values` to the array `key` ("add": `$addToSet`, each once) or take them out ("pull":
        `$pull`), set `changes` and add one to the version, in one atomic update; the document as this
        write left it, None if there is no such document (Stale: at another of `versions`).

        One operator per update: MongoDB refuses `$addToSet` and `$pull` on one path together. The
        update asks for `key` to hold an array, because the embedded server silently skips `$addToSet`
        on a missing field (MongoDB would create it) and MongoDB refuses one on null: a document
        written without the array (missing or null) gets `[]` first, then the update runs again."""
        oid = to_object_id(id)
        if oid is None:
            return None
        operator = {"add": "$addToSet", "pull": "$pull"}[operation]
        argument = {"$each": list(values)} if operation == "add" else {"$in": list(values)}
        sets = {name: value for name, value in changes.items() if name not in (key, VERSION)}
        update: dict[str, Any] = {operator: {key: argument}, "$inc": {VERSION: 1}}
        if sets:
            update["$set"] = sets
        where = {**_versioned(oid, versions), key: {"$type": "array"}}
        for _ in range(2):
            after = await self._col.find_one_and_update(where, update, return_document=ReturnDocument.AFTER)
            if after is not None:
                return to_plain(after)
            # An empty array holds nothing a relation would read: writing one is no change, so no new version.
            made = await self._col.update_one({"_id": oid, key: {"$in": [None]}}, {"$set": {key: []}})
            if not made.matched_count:
                break
        await self._absent(oid, versions)
        return None

    async def _absent(self, oid: Any, versions: Versions) -> None:
        """After a versioned write matched nothing: Stale if the document is there, None if gone."""
        if versions is not None and await self._col.find_one({"_id": oid}, {"_id": 1}, **_joined()) is not None:
            raise Stale()
        return None

    @unavailable_as_error
    @_writing
    async def delete(self, id: str) -> bool:
        oid = to_object_id(id)
        if oid is None:
            return False
        result = await self._col.delete_one({"_id": oid})
        return result.deleted_count == 1

    @unavailable_as_error
    @_writing
    async def remove(self, id: str, versions: Versions = None) -> dict | None:
        """Delete one document and return it as it was deleted (None if it was not there): a caller
        cleans up what this very delete removed, whatever other writers did since it last read.
        With `versions`, only at one of them (Stale when the document is at another)."""
        oid = to_object_id(id)
        if oid is None:
            return None
        removed = await self._col.find_one_and_delete(_versioned(oid, versions), **_joined())
        if removed is None:
            await self._absent(oid, versions)
            return None
        return to_plain(removed)

    @unavailable_as_error
    @_writing
    async def put_back(self, document: Mapping[str, Any], version: int, mark: str | None = None) -> bool:
        """Replaces the document with `document` (its values and version: the whole document, so values
        come back with their types; a `$set` of a bool stores 1/0 on the embedded server), only while
        it is at `version` and, with `mark`, carries it under BULK_MARK: the state a write being taken
        back left. A later writer's change stays, and a document deleted since stays deleted. True if
        it was put back (DuplicateKey: a unique value of `document` is taken by another record now)."""
        stored, oid = _stored(document)
        if oid is None:
            return False
        where = {"_id": oid, VERSION: version, **({BULK_MARK: mark} if mark is not None else {})}
        try:
            result = await self._col.replace_one(where, stored)
        except DuplicateKeyError as error:
            raise DuplicateKey(_duplicate_field(error, self.name)) from None
        return result.matched_count == 1

    @unavailable_as_error
    @_writing
    async def recreate(self, document: Mapping[str, Any]) -> bool:
        """Inserts `document` with its id, values and version, only if no document has its id: what
        taking back a delete means. False when one has (DuplicateKey: a unique value of `document`
        is taken by another record now)."""
        stored, oid = _stored(document)
        if oid is None:
            return False
        try:
            await self._col.insert_one(stored)
        except DuplicateKeyError as error:
            if await self._col.find_one({"_id": oid}, {"_id": 1}) is not None:
                return False
            raise DuplicateKey(_duplicate_field(error, self.name)) from None
        return True

    @unavailable_as_error
    @_writing
    async def delete_where(self, where: Filter) -> int:
        query = await self._query(where)
        if query is None:
            return 0
        result = await self._col.delete_many(query)
        return result.deleted_count

    @unavailable_as_error
    @_writing
    async def drop(self) -> None:
        await self._col.drop()
