"""Taking back the bulk writes a dead process left half done (service/core/operations/bulk.py, storage/journal.py).

`restify serve` runs one pass before it listens (the supervisor, once, before it forks its workers
with `--processes N`), then every process runs one a minute. A pass takes back only journal entries
older than `bulk.recover_after_seconds`, so a bulk write under way in a live process (this host's or
another's) is left alone; passes of several processes at once do no harm (each entry is claimed, and
taking back is safe to repeat).
"""
import asyncio
import logging

from service.config import Settings
from service.console.runtime import build
from service.core.declarations.app import Restify
from service.core.operations import all_or_none
from storage import StorageError

log = logging.getLogger("restify")
EVERY_SECONDS = 60.0


async def recover_once(app: Restify) -> int:
    """One pass; a database that fails is reported, and the next pass tries again."""
    try:
        taken_back = await all_or_none.recover(app)
    except StorageError as error:
        log.warning("unfinished bulk writes not checked: %s", error)
        return 0
    except Exception:  # noqa: BLE001 - the next pass tries again
        log.exception("unfinished bulk writes not checked")
        return 0
    if taken_back:
        log.warning("took back %d unfinished bulk write(s)", taken_back)
    return taken_back


def recover_at_start(settings: Settings, uri: str) -> None:
    """Run by `serve` before it listens."""

    async def once() -> None:
        app = build(settings, uri)
        try:
            await recover_once(app)
        finally:
            app.db.close()

    asyncio.run(once())


async def recover_periodically(app: Restify, stop: asyncio.Event, every: float = EVERY_SECONDS) -> None:
    """A pass every `every` seconds until `stop` is set."""
    while True:
        try:
            await asyncio.wait_for(stop.wait(), timeout=every)
            return
        except asyncio.TimeoutError:
            await recover_once(app)
