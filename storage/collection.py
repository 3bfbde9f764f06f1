"""One MongoDB collection, seen through the few operations the framework needs: its reads and
indexes here, its writes in `storage.writes`."""
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from storage import counts
from storage.filters import RELEVANCE, Filter, among
from storage.grouped_counts import count_groups, key_groups, key_groups_of
from storage.grouping import GroupKey, Metric, Row, group_pipeline, grouped_rows, pinned_group
from storage.guard import unavailable_as_error
from storage.id_pages import IdBound, all_beyond, bounded, id_bound, without_position
from storage.ids import ids_as_text, to_plain
from storage.keyset_reads import keyset_reads
from storage.search_parts import OutOfOrder, merged, search_parts
from storage.indexes import (ExistingIndex, IndexSupport, Keys, create_index, drop_index, embedded_text_index,
                             index_support, list_indexes)
from storage.writes import Writes

Sort = list[tuple[str, int]]
FIRST_BATCH = 10_000
_ESTIMATE = ""  # the key of a kept estimated count: no filter's repr is empty
COUNT_THROUGH = 200  # records of one key value a count reads the ids of, on the embedded server


def _mongo_sort(sort: Sort) -> list[tuple[str, Any]]:
    """The sort as the driver takes it: `id` is `_id`, RELEVANCE the text search's score (its key's
    name is any name: MongoDB reads only the `$meta`)."""
    return [("_id" if name == "id" else "relevance" if name == RELEVANCE else name,
             {"$meta": "textScore"} if name == RELEVANCE else direction) for name, direction in sort]


def _mongo_names(names: Iterable[str]) -> list[str]:
    return ["_id" if name == "id" else name for name in names]


class Collection(Writes):
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
        if fields and all(name == "id" for name, _ in sort or ()) and not (await self._server()).projects_in_find:
            return await self._projected(query, sort, skip, limit, fields)
        cursor = self._cursor(query, sort, skip, limit, fields)
        return [to_plain(document) for document in await cursor.to_list(length=None)]

    async def _projected(self, query: dict[str, Any], sort: Sort | None, skip: int, limit: int,
                         fields: tuple[str, ...]) -> list[dict]:
        """A find of `fields` in `_id` order as an aggregate, whose `$project` the embedded server reads
        in SQL (see `IndexSupport.projects_in_find`)."""
        stages: list[dict[str, Any]] = [{"$match": await self._matched(query)}] if query else []
        stages += [{"$sort": dict(_mongo_sort(sort))}] if sort else []
        stages += [{"$skip": skip}] if skip else []
        stages += [{"$limit": limit}] if limit else []
        stages.append({"$project": dict.fromkeys(_mongo_names(fields), 1)})
        found = await self._col.aggregate(stages).to_list(length=None)
        return [to_plain(document) for document in found]

    def _cursor(self, query: dict[str, Any], sort: Sort | None, skip: int, limit: int,
                fields: tuple[str, ...] = ()) -> Any:
        sorted_by = (name for name, _ in sort or () if name != RELEVANCE)
        projection = dict.fromkeys(_mongo_names([*fields, *sorted_by]), 1) if fields else None
        # One round trip for a whole page or relation batch, not 101 documents then getMore. The options are
        # given to find itself: each chained call is a round through the driver's wrappers.
        return self._col.find(query, projection, sort=_mongo_sort(sort) if sort else None, skip=skip, limit=limit,
                              batch_size=min(limit, FIRST_BATCH) if limit else FIRST_BATCH)

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

    async def count(self, where: Filter, keep_for: float = 0.0, indexed: str | None = None,
                    estimate_for: float = 0.0) -> int:
        """How many documents `where` matches. `keep_for` > 0: the count may be one made at most that many
        seconds ago, while this process wrote nothing to the collection since (storage/counts.py).
        `estimate_for` > 0: a `where` that selects every document is answered with the collection's
        estimated count (its metadata, not a scan) made at most that many seconds ago, on the same terms.
        `indexed`: a field with an index and one value per record (not an array: the embedded server's
        find misses arrays through an index), that `where.equals` fixes, as a BelongsTo key (see
        `_count_through`)."""
        if keep_for <= 0:
            return await self._count(where, indexed, estimate_for)
        return await self._kept(repr(where), keep_for, lambda: self._count(where, indexed, estimate_for))

    async def _kept(self, key: str, seconds: float, counting: Callable[[], Awaitable[int]]) -> int:
        """The count kept under `key` (storage/counts.py), else what `counting` counts, kept for `seconds`."""
        found = counts.kept(self._col, key)
        if found is None:
            counted_at = counts.generation(self._col)
            found = await counting()
            counts.keep(self._col, key, counted_at, found, seconds)
        return found

    @unavailable_as_error
    async def _count(self, where: Filter, indexed: str | None = None, estimate_for: float = 0.0) -> int:
        parts = await self._search_parts(where)
        if parts is not None:  # disjoint, so the counts add up (storage/search_parts.py)
            return sum([await self._count_part(part, indexed) for part in parts])
        query = await self._query(where)
        if query is None:
            return 0
        if not query:
            return await self._estimated(estimate_for)
        if indexed is not None and not (await self._server()).counts_through_indexes:
            found = await self._count_through(query, indexed)
            if found is not None:
                return found
        return await self._counted(query)

    async def _estimated(self, seconds: float) -> int:
        """The collection's estimated count, kept `seconds` when more than 0."""
        if seconds <= 0:
            return int(await self._col.estimated_document_count())
        return await self._kept(_ESTIMATE, seconds, self._col.estimated_document_count)

    async def _count_part(self, part: Filter, indexed: str | None) -> int:
        """A search part's count: one that keeps in or leaves out a key's related ids by groups of that key,
        which the embedded server counts in one SQL pass (storage/grouped_counts.py); the others, and one
        the groups cannot tell, as any count."""
        groups = key_groups_of(part)
        query = await self._query(groups.rest) if groups is not None else None
        if groups is not None and query is not None:
            pipeline = key_groups(await self._matched(query), groups.key)
            found = count_groups(await self._col.aggregate(pipeline).to_list(length=None), groups)
            if found is not None:
                return found
        return await self._count(part, indexed)

    async def _counted(self, query: dict[str, Any]) -> int:
        # $match + $count: count_documents' $group pipeline is slow on the embedded server.
        rows = await self._col.aggregate([{"$match": await self._matched(query)}, {"$count": "n"}]).to_list(length=1)
        return rows[0]["n"] if rows else 0

    async def _count_through(self, query: dict[str, Any], indexed: str) -> int | None:
        """The embedded server counts an equality beside other conditions by testing every document
        (the equality's SQL also matches arrays, which keeps the index out: 24 ms at 5,000 records, 52
        at 20,000), while its find reads the equality's index (6 ms for 50 records, at either size). So
        the equality alone is counted (from the index), and when it leaves at most COUNT_THROUGH
        records, the ids of those the whole query matches are read and counted. None: count as usual
        (the key is not fixed beside other conditions, or fixes too many records)."""
        value = query.get(indexed)
        if len(query) < 2 or value is None or isinstance(value, dict):
            return None
        many = await self._counted({indexed: value})
        if not many or many > COUNT_THROUGH:
            return None if many else 0
        return len(await self._col.find(query, {"_id": 1}).batch_size(COUNT_THROUGH + 1).to_list(length=None))

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
        pinned = pinned_group(where.equals, keys, metrics)
        if pinned is not None:
            found = await self._count(where)
            return [(pinned, {metric.label: found for metric in metrics})] if found else []
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
