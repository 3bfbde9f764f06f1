"""`restify trash:purge --older-than 30d`: deletes for good the records of repositories with soft
deletes that were trashed longer ago than that (service/core/operations/trash.py)."""
import asyncio
import sys
from datetime import timedelta

from service.config import Settings
from service.console.prune import SCAN_TIMEOUT_MS
from service.console.runtime import build, database_uri
from service.core.operations.trash import purge
from storage import Unavailable


def purge_trash(settings: Settings, age: timedelta) -> int:
    """Purges and prints how many records, per repository with soft deletes; returns the exit code."""
    with database_uri(settings) as uri:
        try:
            purged = asyncio.run(_purge(settings, uri, age))
        except Unavailable:
            print("restify: the database is unavailable", file=sys.stderr)
            return 1
    if not purged:
        print("No repository has soft deletes: nothing to purge.")
    for name, count in purged.items():
        print(f"{name}\t{count} record(s) deleted for good")
    return 0


async def _purge(settings: Settings, uri: str, age: timedelta) -> dict[str, int]:
    app = build(settings, uri, timeout_ms=SCAN_TIMEOUT_MS)
    try:
        return await purge(app, age)
    finally:
        app.db.close()
