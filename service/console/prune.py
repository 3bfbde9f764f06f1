"""`restify storage:prune`, and the clean-up `serve` does at start.

What a crash leaves: a killed upload's temporary file (local disk), the older GridFS revision
a replacing upload did not get to delete, chunks whose file document a cut-short delete
removed, and files written for a record that was never stored. Anything younger than
`files.stale_after_seconds` is left alone: it may belong to an upload still under way in a
live process (this one or another host's), which only takes seconds.
"""
import asyncio
import logging
import sys

from service.config import Settings
from service.console.runtime import build, database_uri
from service.core.writing import uploads
from storage import StorageError, Unavailable

log = logging.getLogger("restify")
SCAN_TIMEOUT_MS = 600_000  # storage:prune reads every record and file: not a request's 2 s


def stale_after(settings: Settings) -> float:
    return float(settings.get("files", "stale_after_seconds"))


def prune(settings: Settings, apply: bool, older_than: float | None = None) -> int:
    """Lists what no record needs (and deletes it with `apply`); returns the exit code."""
    with database_uri(settings) as uri:
        try:
            return asyncio.run(_prune(settings, uri, apply,
                                      stale_after(settings) if older_than is None else older_than))
        except Unavailable:
            print("restify: the database is unavailable", file=sys.stderr)
            return 1


async def _prune(settings: Settings, uri: str, apply: bool, older_than: float) -> int:
    app = build(settings, uri, timeout_ms=SCAN_TIMEOUT_MS)
    try:
        found = await uploads.leftovers(app, older_than)
        for why, item in found:
            print(f"{item.disk}\t{why}\t{item.path}")
        if not found:
            print("Nothing to prune.")
        elif apply:
            print(f"Deleted {await uploads.remove(app, [item for _, item in found])} file(s).")
        else:
            print(f"{len(found)} file(s) to delete; run again with --apply to delete them.")
        return 0
    finally:
        app.db.close()


def remove_stale_temporary_files(settings: Settings, uri: str) -> None:
    """Run by `serve` before it listens: reclaims what interrupted uploads left (no full scans,
    the request-path timeout). A database that fails here is reported; the start goes on."""
    try:
        removed = asyncio.run(_remove_stale(settings, uri))
    except StorageError as error:
        log.warning("stale temporary files not checked: %s", error)
        return
    if removed:
        log.info("removed %d stale temporary file(s) left by interrupted writes", removed)


async def _remove_stale(settings: Settings, uri: str) -> int:
    app = build(settings, uri)
    try:
        found = await uploads.leftovers(app, stale_after(settings), thorough=False)
        return await uploads.remove(app, [item for _, item in found])
    finally:
        app.db.close()
