"""Storage exceptions, free of driver types so callers never import pymongo."""


class StorageError(Exception):
    """Base of everything storage raises on purpose."""


class DuplicateKey(StorageError):
    """A unique index refused a write; `field` names the indexed field when known."""

    def __init__(self, field: str | None) -> None:
        super().__init__(f"duplicate value for {field or 'a unique field'}")
        self.field = field


class Stale(StorageError):
    """A versioned write found the document at another version: someone changed it meanwhile."""

    def __init__(self) -> None:
        super().__init__("the document is at another version")


class Unavailable(StorageError):
    """The database could not be reached in time."""


class Unstorable(StorageError):
    """A value BSON cannot carry: a string that is not text (a lone surrogate), an integer past
    64 bits. Callers validate first; this keeps anything that slips through a refusal, not a crash."""
