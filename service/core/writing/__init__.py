"""Validation, uploads and the one write path.

May import: kernel, declarations, reading, identity (docs/architecture.md: the layers and their rules).
"""
from service.core.writing.uploads import Upload
from service.core.writing.validation import canonical_references, validate
from service.core.writing.writes import (Prepared, Saved, SetChange, Write, after_remove, before, before_remove,
                                         check_version, delete_record, expected_versions, finish, now, persist, prepare,
                                         remove, write)

__all__ = [
    "Prepared", "Saved", "SetChange", "Upload", "Write", "after_remove", "before", "before_remove",
    "canonical_references", "check_version", "delete_record", "expected_versions", "finish", "now", "persist",
    "prepare", "remove", "validate", "write"
]
