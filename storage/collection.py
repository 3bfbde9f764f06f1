"""One MongoDB collection, seen through the few operations the framework needs."""
import collections.abc as abc
import functools
import re
from contextvars import ContextVar
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from storage import counts
from storage.errors import DuplicateKey, Stale
from storage.filters import RELEVANCE, Filter, among
from storage.grouping import GroupKey, Metric, Row, group_pipeline, grouped_rows
from storage.guard import unavailable_as_error
from storage.id_pages import IdBound, all_beyond, bounded, id_bound, without_position
from storage.ids import ids_as_text, to_object_id, to_plain
from storage.keyset_reads import keyset_reads
from storage.pre_images import pre_images, settle
from storage.search_parts import OutOfOrder, merged, search_parts
from storage.indexes import (ExistingIndex, IndexSupport, Keys, create_index, drop_index, embedded_text_index,
                             index_support, list_indexes)

Sort = list[tuple[str, int]]
T = TypeVar("T")
FIRST_BATCH = 10_000
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


def _mongo_sort(sort: Sort) -> list[tuple[str, Any]]:
    """The sort as the driver takes it: `id` is `_id`, RELEVANCE the text search's score (its key's
    name is any name: MongoDB reads only the `$meta`)."""
    return [("_id" if name == "id" else "relevance" if name == RELEVANCE else name,
             {"$meta": "textScore"} if name == RELEVANCE else direction) for name, direction in sort]


def _mongo_names(names: Iterable[str]) -> list[str]:
    return ["_id" if name == "id" else name for name in names]


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
    async def wrapped(self: "Collection", *args: Any, **kwargs: Any) -> T:
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


class Collection:
    """`support`: what the database's server is sent (`Database.index_support`, which applies the
    profile); without it, the server's own shapes, asked once."""

    def __init__(self, motor_collection: Any, support: Callable[[], Awaitable[IndexSupport]] | None = None) -> None:
        self._col = motor_collection
        self.name: str = motor_collection.name
        # Writes by this process that changed or removed stored documents (inserts are not counted),
        # and those that removed some: what a per-process cache of documents compares against.
        self.revision = 0
        self.removals = 0
        self._support: IndexSupport | None = None
        self._ask_support = support

    @unavailable_as_error
    async def find(self, where: Filter, sort: Sort | None = None, skip: int = 0, limit: int = 0,
                   fields: tuple[str, ...] = ()) -> list[dict]:
        """The documents `where` matches; `fields`: only these (and the id and the sort's keys), not whole."""
        parts = await self._search_parts(where)
        if parts is not None:
            # A search through related ids, in the embedded server's shapes: plain parts, merged
            # (storage/search_parts.py).
            async def read_part(part: Filter, part_sort: Sort, part_limit: int) -> list[dict]:
                return await self.find(part, sort=part_sort, limit=part_limit, fields=fields)
            try:
                return await merged(read_part, parts, sort, skip, limit)
            except OutOfOrder:
                pass
        if where.after is not None and not skip and list(where.after[0]) == list(sort or ()) \
                and not (await self._server()).id_ranges_indexed:
            # A keyset page in the embedded server's shapes: through the _id index, in plain parts (no $or).
            bound = id_bound(where, sort)
            documents = await self._find_by_id_bound(where, bound, sort, limit, fields) if bound is not None else None
            if documents is not None:
                return [to_plain(document) for document in documents]
            reads = keyset_reads(where)
            if reads is not None:
                return await self._find_in_parts(reads, limit, fields)
        query = await self._query(where)
        if query is None:
            return []
        cursor = self._cursor(query, sort, skip, limit, fields)
        return [to_plain(document) for document in await cursor.to_list(length=None)]

    def _cursor(self, query: dict[str, Any], sort: Sort | None, skip: int, limit: int,
                fields: tuple[str, ...] = ()) -> Any:
        sorted_by = (name for name, _ in sort or () if name != RELEVANCE)
        projection = dict.fromkeys(_mongo_names([*fields, *sorted_by]), 1) if fields else None
        cursor = self._col.find(query, projection)
        if sort:
            cursor = cursor.sort(_mongo_sort(sort))
        if skip:
            cursor = cursor.skip(skip)
        if limit:
            cursor = cursor.limit(limit)
        # One round trip for a whole page or relation batch, not 101 documents then getMore.
        return cursor.batch_size(min(limit, FIRST_BATCH) if limit else FIRST_BATCH)

    async def _find_by_id_bound(self, where: Filter, bound: IdBound, sort: Sort | None,
                                limit: int, fields: tuple[str, ...]) -> list[dict] | None:
        """A keyset page over the id read through the embedded server's `_id` index (see
        storage/id_pages.py); None when its answer is not certainly the page."""
        query = await self._query(without_position(where, bound))
        if query is None:
            return []
        documents = await bounded(self._cursor(query, sort, 0, limit, fields), bound).to_list(length=None)
        return documents if all_beyond(documents, bound) else None

    async def _find_in_parts(self, reads: list[tuple[Filter, Sort]], limit: int, fields: tuple[str, ...]) -> list[dict]:
        """The answers of `reads` one after the other, until `limit` (storage/keyset_reads.py)."""
        found: list[dict] = []
        for part, sort in reads:
            found += await self.find(part, sort=sort, limit=limit - len(found) if limit else 0, fields=fields)
            if limit and len(found) >= limit:
                break
        return found

    async def _query(self, where: Filter) -> dict[str, Any] | None:
        """`where` in the shapes this server is sent."""
        if not where.search_text:  # only a search is sent in the server's own shapes: no need to ask it
            return where.to_mongo()
        server = await self._server()
        return where.to_mongo(substrings=server.substrings_in_sql, text=server.text_search)

    async def ranks(self, where: Filter) -> bool:
        """Whether `where`'s search is a `$text` search this server ranks (a sort by RELEVANCE)."""
        return where.by_text() and (await self._server()).text_search

    async def _search_parts(self, where: Filter) -> list[Filter] | None:
        if not (where.search_text and where.search_within) or (await self._server()).or_indexed:
            return None
        return search_parts(where)

    async def _server(self) -> IndexSupport:
        if self._support is None:
            self._support = await (self._ask_support() if self._ask_support else index_support(self._col.database))
        return self._support

    async def count(self, where: Filter, keep_for: float = 0.0) -> int:
        """How many documents `where` matches. `keep_for` > 0: the count may be one made at most that many
        seconds ago, while this process wrote nothing to the collection since (storage/counts.py)."""
        if keep_for <= 0:
            return await self._count(where)
        key = repr(where)
        found = counts.kept(self._col, key)
        if found is None:
            counted_at = counts.generation(self._col)
            found = await self._count(where)
            counts.keep(self._col, key, counted_at, found, keep_for)
        return found

    @unavailable_as_error
    async def _count(self, where: Filter) -> int:
        parts = await self._search_parts(where)
        if parts is not None:  # disjoint, so the counts add up (storage/search_parts.py)
            return sum([await self._count(part) for part in parts])
        query = await self._query(where)
        if query is None:
            return 0
        if not query:
            return await self._col.estimated_document_count()
        # $match + $count: count_documents' $group pipeline is slow on the embedded server.
        rows = await self._col.aggregate([{"$match": await self._matched(query)}, {"$count": "n"}]).to_list(length=1)
        return rows[0]["n"] if rows else 0

    async def _matched(self, query: dict[str, Any]) -> dict[str, Any]:
        """`query` as an aggregate's `$match` is sent it."""
        text_ids = ids_as_text(query)
        if text_ids is not query and not (await self._server()).aggregate_binds_ids:
            return text_ids  # an id in a filter or a read rule (scope {"id": ...}), in the embedded server's shapes
        return query

    @unavailable_as_error
    async def group(self, where: Filter, keys: Sequence[GroupKey], metrics: Sequence[Metric], most: int) -> list[Row]:
        """The groups of the records `where` matches (storage/grouping.py): more than `most` of them
        when there are more, so the caller can tell."""
        query = await self._query(where)
        if query is None:
            return []
        pipeline = group_pipeline(await self._matched(query), keys, metrics, most)
        return grouped_rows(await self._col.aggregate(pipeline).to_list(length=None), keys, metrics)

    async def find_by_id(self, id: str) -> dict | None:
        rows = await self.find(Filter(equals={"id": id}), limit=1)
        return rows[0] if rows else None

    async def find_one(self, where: Filter) -> dict | None:
        rows = await self.find(where, limit=1)
        return rows[0] if rows else None

    async def find_within(self, name: str, values: Iterable[Any], sort: Sort | None = None,
                          limit: int | None = None, where: Filter | None = None) -> list[dict]:
        """Every document whose `name` is one of `values` (and that `where` matches too):
        one query for a whole batch."""
        within = among(name, values, where)
        return await self.find(within, sort=sort, limit=limit or 0) if within is not None else []

    async def count_within(self, name: str, values: Iterable[Any], where: Filter | None = None) -> int:
        """How many documents `find_within` would read, without reading them."""
        within = among(name, values, where)
        return await self.count(within) if within is not None else 0

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

    async def ensure_unique(self, name: str) -> None:
        await self.create_index(((name, 1),), unique=True)

    async def create_index(self, keys: Keys, unique: bool = False) -> None:
        """IndexRefused when the server will not make it; nothing happens when it exists."""
        await create_index(self._col, keys, unique)

    async def indexes(self) -> list[ExistingIndex]:
        listed = await list_indexes(self._col)
        if (await self._server()).keeps_names or not listed:  # MongoDB lists its text index; a new collection has none
            return listed
        return listed + await embedded_text_index(self._col)

    async def drop_index(self, name: str) -> None:
        """`name` as `indexes()` lists it (the embedded server renames what it makes)."""
        await drop_index(self._col, name)

    @unavailable_as_error
    @_writing
    async def drop(self) -> None:
        await self._col.drop()
