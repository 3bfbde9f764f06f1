"""MongoDB access: the only package that imports motor, pymongo or bson.

Everything above it speaks in plain values: ids are strings, filters are
`Filter` objects, documents are dicts whose `_id` has become `id`.

Exceptions raised here:
    StorageError -> DuplicateKey | Stale | Unavailable | Unstorable | ChangesUnsupported | HistoryLost | IndexRefused
"""
from storage.changes import Change, ChangesUnsupported, HistoryLost, Watcher
from storage.client import Database, connect, database_name, has_transactions
from storage import counts
from storage.collection import Collection
from storage.writes import BULK_MARK, VERSION, Versions, version_of
from storage.counters import Counters, Hit
from storage.deliveries import CURSORS, DELIVERIES, Deliveries
from storage.embedded import EmbeddedServer
from storage.errors import DuplicateKey, Stale, StorageError, Unavailable, Unstorable
from storage.files import Disk, GridFSDisk, LocalDisk, StoredFile, safe_path
from storage.filters import RELEVANCE, Filter, among
from storage.grouping import DATE_UNITS, GroupKey, Metric
from storage.ids import canonical_id, is_valid_id, new_id
from storage.indexes import TEXT, ExistingIndex, IndexRefused, IndexSupport
from storage.journal import JOURNAL, Entry, Journal, Step
from storage.outbox import OUTBOX, Outbox

__all__ = [
    "BULK_MARK",
    "CURSORS",
    "DELIVERIES",
    "Deliveries",
    "JOURNAL",
    "OUTBOX",
    "RELEVANCE",
    "TEXT",
    "VERSION",
    "Versions",
    "Change",
    "ChangesUnsupported",
    "Collection",
    "Counters",
    "Database",
    "DuplicateKey",
    "EmbeddedServer",
    "ExistingIndex",
    "Disk",
    "Entry",
    "DATE_UNITS",
    "Filter",
    "GroupKey",
    "GridFSDisk",
    "Hit",
    "HistoryLost",
    "IndexRefused",
    "IndexSupport",
    "Journal",
    "LocalDisk",
    "Metric",
    "Outbox",
    "StorageError",
    "StoredFile",
    "Stale",
    "Step",
    "Unavailable",
    "Unstorable",
    "Watcher",
    "among",
    "canonical_id",
    "connect",
    "counts",
    "database_name",
    "has_transactions",
    "is_valid_id",
    "new_id",
    "safe_path",
    "version_of",
]
