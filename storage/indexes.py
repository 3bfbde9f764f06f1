"""Index creation and listing in plain values: keys are ((field, direction), ...), with `id` for `_id`.

The embedded nx-27017 server differs from MongoDB in three ways callers must know to compare a plan
with what exists: it renames every index (`idx_<collection>_<fields>`), lists every key as
ascending, and refuses a compound index that includes `_id`. `IndexSupport` says which server
answers, so those differences are reported as such, not as drift.

`IndexSupport` is also the one place where `storage/` chooses between the query shapes it sends
MongoDB and those it sends the embedded server: a keyset page or a search as one `$or` or as plain
parts, a page over the id as a `$gt` on `_id` or as the find's `min`/`max` bound, ObjectIds or their
text in a count. The `database.profile` setting decides whose query shapes are sent (`support_for`):
"auto" those of the server that answers, "mongodb" MongoDB's to any server (CI runs the storage and
query tests that way on the embedded server, so MongoDB's paths run there), "embedded" the embedded
server's to any server (wrong answers on MongoDB: ids compared as text). What the server accepts as
an index and how it lists indexes stay the server's own: the embedded server accepts a compound index
with `_id` on a collection not yet made, and then refuses every insert into it.
"""
import logging
from dataclasses import dataclass, replace
from typing import Any

from pymongo.errors import DuplicateKeyError, OperationFailure

from storage.errors import StorageError
from storage.guard import unavailable_as_error

Keys = tuple[tuple[str, int | str], ...]  # a direction, or TEXT: the field is in the text index
TEXT = "text"
EMBEDDED_PROCESS = "nx_27017"  # what the embedded server answers to buildInfo as its process
PROFILES = ("auto", "mongodb", "embedded")  # the values of `database.profile`
log = logging.getLogger("restify")


class IndexRefused(StorageError):
    """The server would not create an index (unsupported keys, conflicting options, duplicates)."""


@dataclass(frozen=True)
class ExistingIndex:
    name: str
    keys: Keys
    unique: bool


@dataclass(frozen=True)
class IndexSupport:
    server: str              # "MongoDB" or "nx-27017 (embedded)", and whose query shapes it is sent if not its own
    # What the server accepts and answers, whatever the profile:
    id_in_compound: bool     # a compound index may include _id
    reports_direction: bool  # list_indexes keeps each key's direction
    keeps_names: bool        # list_indexes answers the name the index was created with
    # The query shapes it is sent, which the profile may choose (`sending`):
    id_ranges_indexed: bool = True  # a range on _id ($gt...) is read from the _id index
    # An aggregate's $match (a count) takes an ObjectId. The embedded server's cannot bind one (the
    # command fails), and matches `_id` by its hex text instead, as its find matches ObjectIds.
    aggregate_binds_ids: bool = True
    or_indexed: bool = True  # a $or is read from indexes (not evaluated over every document)
    # A plain search text is tested as a substring by the server's own operator, in SQL
    # (storage/filters.py, `substring_test`), rather than by a pattern it tests in Python.
    substrings_in_sql: bool = False
    # A search over the text index's fields is `$text`, and can be ranked (`{"$meta": "textScore"}`).
    # The embedded server accepts both but differs (tests/storage/test_text_search.py): it is sent
    # the substring test.
    text_search: bool = True
    # A find's projection is applied to each document it loads whole (a 65 KB body is decoded to be
    # dropped); an aggregate's `$project` the embedded server reads in SQL, 2-3x faster on large
    # records. So a read of a few fields in `_id` order is sent as an aggregate there.
    projects_in_find: bool = True
    # A count of an equality on an indexed field beside other conditions reads that index. The
    # embedded server's count tests every document; its find reads the index (Collection._count_through).
    counts_through_indexes: bool = True

    def sending(self, shapes: "IndexSupport") -> "IndexSupport":
        """This server, sent the query shapes of `shapes`; the indexes it accepts and how it lists
        them stay its own."""
        if shapes == self:
            return self
        return replace(shapes, server=f"{self.server}, sent {shapes.server}'s query shapes",
                       id_in_compound=self.id_in_compound, reports_direction=self.reports_direction,
                       keeps_names=self.keeps_names)


MONGODB = IndexSupport("MongoDB", id_in_compound=True, reports_direction=True, keeps_names=True)
EMBEDDED = IndexSupport("nx-27017 (embedded)", id_in_compound=False, reports_direction=False, keeps_names=False,
                        id_ranges_indexed=False, aggregate_binds_ids=False, or_indexed=False,
                        substrings_in_sql=True, text_search=False, projects_in_find=False,
                        counts_through_indexes=False)


def _to_mongo(keys: Keys) -> list[tuple[str, int | str]]:
    return [("_id" if name == "id" else name, direction) for name, direction in keys]


def _to_plain(listed: dict[str, Any]) -> Keys:
    """A listed index's keys; MongoDB lists a text index as `_fts`/`_ftsx` with its fields as `weights`."""
    if "weights" in listed:
        return tuple((name, TEXT) for name in sorted(listed["weights"]))
    return tuple(("id" if name == "_id" else name, direction if direction == TEXT else int(direction))
                 for name, direction in dict(listed.get("key", {})).items())


def text_keys(keys: Keys) -> bool:
    return any(direction == TEXT for _, direction in keys)


@unavailable_as_error
async def create_index(motor_collection: Any, keys: Keys, unique: bool = False) -> None:
    """Creates the index under the driver's default name (`email_1`, `views_1__id_1`); an index
    already there with the same keys and options is left as it is."""
    options = {"unique": True} if unique else {}
    try:
        await motor_collection.create_index(_to_mongo(keys), **options)
    except DuplicateKeyError as error:
        raise IndexRefused(f"stored records repeat a value: {error}") from None
    except OperationFailure as error:
        raise IndexRefused(str((error.details or {}).get("errmsg") or error)) from None


@unavailable_as_error
async def drop_index(motor_collection: Any, name: str) -> None:
    await motor_collection.drop_index(name)


@unavailable_as_error
async def list_indexes(motor_collection: Any) -> list[ExistingIndex]:
    """The collection's indexes, the one on `_id` included (none for a collection not yet made)."""
    found = await motor_collection.list_indexes().to_list(length=None)
    return [ExistingIndex(str(d.get("name", "")), _to_plain(d), bool(d.get("unique"))) for d in found]


@unavailable_as_error
async def embedded_text_index(motor_collection: Any) -> list[ExistingIndex]:
    """The embedded server's text index, which it leaves out of `listIndexes` and lists field by field
    as search indexes; [] when there is none."""
    found = await motor_collection.database.command({"listSearchIndexes": motor_collection.name})
    names = sorted(str(name) for d in found["cursor"]["firstBatch"] for name, kind in d.get("key", {}).items()
                   if kind == TEXT)
    return [ExistingIndex("text", tuple((name, TEXT) for name in names), False)] if names else []


def profile_name(profile: str | None) -> str:
    """`database.profile` as one of PROFILES (unset or empty: "auto"); ValueError for anything else."""
    name = (profile or "auto").strip().lower() or "auto"
    if name not in PROFILES:
        raise ValueError(f"database.profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    return name


def support_for(server: IndexSupport, profile: str) -> IndexSupport:
    """What `server` is sent under `profile` (a name from PROFILES): every choice of a shape reads this."""
    if profile == "mongodb":
        return server.sending(MONGODB)
    if profile == "embedded":
        if server == MONGODB:
            log.warning("database.profile is \"embedded\" on MongoDB: some answers will be wrong (counts "
                        "and cursor pages by id compare ids as text)")
        return server.sending(EMBEDDED)
    return server


@unavailable_as_error
async def index_support(motor_database: Any, profile: str = "auto") -> IndexSupport:
    info = await motor_database.command("buildInfo")
    return support_for(EMBEDDED if info.get("process") == EMBEDDED_PROCESS else MONGODB, profile_name(profile))
