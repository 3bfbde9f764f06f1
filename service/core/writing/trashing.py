"""Soft deletes, written: trashing a record, restoring it, and what a change of either looks like.

A repository with `soft_deletes = True` trashes on delete: `deleted_at` and `updated_at` get the same
stamp, the version goes up, and the record stays, with its files; every read leaves it out from then
on (`service.core.reading.visibility`). A restore sets `deleted_at` back to null and `restored_at`
and `updated_at` to one stamp. Those equal stamps are what tells a live feed, from the stored record
alone, that a change was the trashing (`deleted` for subscribers) or the restoring (`created`), and
not any other update. A forced delete, or the purge of old trash, is the plain delete of the write path.

The repository's `before_delete` and `deleted` hooks run around a trashing too: to the application
the record is deleted.
"""
from typing import Any

from service.core.declarations import DELETED_AT, Context, Resource, Restify
from service.core.kernel import NotFound, ValidationFailed
from service.core.writing.validation import taken_values, unique_message
from service.core.writing.writes import after_trash, before_remove, now
from storage import DuplicateKey, Versions

RESTORED_AT = "restored_at"
TRASHED, RESTORED = "trashed", "restored"


async def trash(app: Restify, resource: Resource, context: Context, document: dict[str, Any],
                versions: Versions = None) -> dict[str, Any]:
    """Trashes an authorized record (before-hook, the write, after-hook); returns it as trashed."""
    await before_remove(resource, context, document, versions)
    trashed = await trash_record(app, resource, document, versions)
    await after_trash(resource, context, trashed)
    return trashed


async def trash_record(app: Restify, resource: Resource, document: dict[str, Any],
                       versions: Versions = None) -> dict[str, Any]:
    """The write alone: `deleted_at` and `updated_at` set to one stamp (bulk deletes run it in their
    all-or-none); returns the record as trashed."""
    stamp = now()
    swapped = await app.collection(resource).swap(document["id"], {DELETED_AT: stamp, "updated_at": stamp}, versions)
    if swapped is None:
        raise NotFound()
    return swapped[1]


async def untrash(app: Restify, resource: Resource, context: Context, document: dict[str, Any],
                  versions: Versions = None) -> dict[str, Any]:
    """Restores an authorized trashed record; returns it as restored. A `unique:` value another live
    record took meanwhile is a 422 naming the field, as a store of that value would be."""
    fields = resource.fields(context)
    taken = await taken_values(app, fields, document)
    if taken:
        raise ValidationFailed(taken)
    stamp = now()
    try:
        swapped = await app.collection(resource).swap(
            document["id"], {DELETED_AT: None, RESTORED_AT: stamp, "updated_at": stamp}, versions)
    except DuplicateKey as error:  # taken between the check and the write
        raise ValidationFailed(unique_message(fields, error.field)) from None
    if swapped is None:
        raise NotFound()
    return swapped[1]


def trash_change(document: dict[str, Any] | None) -> str | None:
    """TRASHED when the write that left `document` so trashed it, RESTORED when it restored it, else None."""
    if document is None:
        return None
    stamp = document.get("updated_at")
    if stamp is None:
        return None
    if document.get(DELETED_AT) == stamp:
        return TRASHED
    return RESTORED if document.get(RESTORED_AT) == stamp and document.get(DELETED_AT) is None else None
