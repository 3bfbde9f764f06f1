"""`restify webhooks:failed` and `restify webhooks:replay`: the deliveries given up on, and sending them again."""
import asyncio
from datetime import datetime, timezone
from typing import Any

from service.config import Settings
from service.console.runtime import build, database_uri


def _line(delivery: dict[str, Any]) -> str:
    created = datetime.fromtimestamp(float(delivery.get("created_at") or 0), timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    url = str(delivery.get("webhook", "")).partition(" ")[2]
    return "\t".join([delivery["id"], str(delivery.get("event", "")), str(delivery.get("record", "")), url,
                      f"{delivery.get('attempts', 0)} attempt(s)", created, str(delivery.get("last_error") or "")])


async def _failed(settings: Settings, uri: str) -> list[str]:
    app = build(settings, uri)
    try:
        lines = [_line(delivery) for delivery in await app.db.deliveries().failed()]
        return lines or ["No webhook delivery failed."]
    finally:
        app.db.close()


async def _replay(settings: Settings, uri: str, ids: list[str] | None) -> int:
    app = build(settings, uri)
    try:
        return await app.db.deliveries().replay(ids)
    finally:
        app.db.close()


def failed(settings: Settings) -> int:
    """Prints one tab-separated line per delivery given up on (id, event, record, URL, attempts, captured at
    (UTC), last error)."""
    with database_uri(settings) as uri:
        for line in asyncio.run(_failed(settings, uri)):
            print(line)
    return 0


def replay(settings: Settings, ids: list[str], every: bool) -> int:
    """Puts the failed deliveries `ids` (or, with `every`, all of them) back in line: the next pass of a
    sender tries them again, each with a new `webhooks.retry_for`."""
    with database_uri(settings) as uri:
        count = asyncio.run(_replay(settings, uri, None if every else ids))
    print(f"Put {count} failed deliver{'y' if count == 1 else 'ies'} back in line.")
    return 0 if every or count == len(ids) else 1
