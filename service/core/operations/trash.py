"""Soft deletes: restoring a trashed record, and purging what was trashed long ago.

Deleting (trashing, or `?force=true` for good) is `crud.delete`; which records a read takes is
`service.core.reading.visibility`; how a trashing or restoring is written, `service.core.writing.trashing`.
"""
from datetime import datetime, timedelta, timezone
from typing import Any

from service.core.declarations import DELETED_AT, Context, Restify, iso
from service.core.kernel import NotFound
from service.core.operations.crud import authorize, enter_to_write, find
from service.core.reading import fill, serialize
from service.core.writing import after_remove, delete_record, untrash
from storage import Filter, Versions

PURGE_BATCH = 200  # trashed records read at a time by a purge


async def restore(app: Restify, name: str, id: str, context: Context, versions: Versions = None) -> dict[str, Any]:
    """Restores a trashed record the user may see trashed (`view_trashed`, else `delete`) and may
    restore (`restore`, else `delete`); answers it as show does. A record that is not trashed, or
    a repository without soft deletes, is a 404."""
    app = app.pinned()
    context.action = "restore"
    resource = await enter_to_write(app, name, context)
    if not resource.soft_deletes:
        raise NotFound(f"{name} has no soft deletes: there is nothing to restore.")
    document = await find(app, resource, id, context, "only")
    authorize(app, resource, "restore", context, document)
    await app.ready()
    restored = await untrash(app, resource, context, document, versions)
    await fill(app, resource, context, [restored])
    return {"data": serialize(app, resource, context, restored)}


def older_than(text: str) -> timedelta:
    """`30d`, `12h`, `45m` or `90s` as a duration; a ValueError names what is accepted."""
    units = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
    amount, unit = text[:-1], text[-1:]
    if unit not in units or not amount.isdigit():
        raise ValueError(f"{text!r} is not a duration: write a whole number and d, h, m or s (30d, 12h)")
    return timedelta(**{units[unit]: int(amount)})


async def purge(app: Restify, age: timedelta, context: Context | None = None) -> dict[str, int]:
    """Deletes for good, in every repository with soft deletes, the records trashed more than `age`
    ago (with their files, the `deleted` hook and, for users, their tokens); returns how many, by
    repository."""
    context = context or Context(action="delete")
    cutoff = iso(datetime.now(timezone.utc) - age)
    purged: dict[str, int] = {}
    for resource in app.registry.resources.values():
        if not resource.soft_deletes:
            continue
        count = 0
        while documents := await app.collection(resource).find(Filter(before=(DELETED_AT, cutoff)),
                                                               limit=PURGE_BATCH):
            for document in documents:
                try:
                    await after_remove(app, resource, context, await delete_record(app, resource, document))
                except NotFound:
                    continue  # purged meanwhile by another process
                count += 1
        purged[resource.name] = count
    return purged
