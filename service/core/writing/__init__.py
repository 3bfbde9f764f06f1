"""Validation, uploads and the one write path.

May import: kernel, declarations, reading, identity (docs/architecture.md: the layers and their rules).
"""
from service.core.writing.trashing import RESTORED, TRASHED, trash, trash_change, trash_record, untrash
from service.core.writing.uploads import Upload
from service.core.writing.validation import canonical_references, validate
from service.core.writing.writes import (Prepared, Saved, SetChange, Write, after_remove, after_trash, before,
                                         before_remove, check_version, delete_record, expected_versions, finish, now,
                                         persist, prepare, remove, write)

__all__ = [
    "Prepared", "RESTORED", "Saved", "SetChange", "TRASHED", "Upload", "Write", "after_remove", "after_trash",
    "before", "before_remove", "canonical_references", "check_version", "delete_record", "expected_versions",
    "finish", "now", "persist", "prepare", "remove", "trash", "trash_change", "trash_record", "untrash", "validate",
    "write"
]
