"""`restify mail:failed`: the messages the outbox could not send, given up on or still retried."""
import asyncio
from datetime import datetime, timezone
from typing import Any

from service.config import Settings
from service.console.runtime import build, database_uri


def _line(message: dict[str, Any]) -> str:
    created = datetime.fromtimestamp(float(message.get("created_at") or 0), timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    state = "failed" if message.get("state") == "failed" else "retrying"
    return "\t".join([message["id"], state, f"{message.get('attempts', 0)} attempt(s)", created, str(message["to"]),
                      str(message.get("subject", "")), str(message.get("last_error") or "")])


async def _failed(settings: Settings, uri: str, retry: bool) -> list[str]:
    app = build(settings, uri)
    try:
        outbox = app.db.outbox()
        lines = [_line(message) for message in await outbox.troubled()]
        if not lines:
            return ["No mail failed to send."]
        if retry:
            lines.append(f"Put {await outbox.retry_failed()} failed message(s) back in line.")
        return lines
    finally:
        app.db.close()


def failed(settings: Settings, retry: bool = False) -> int:
    """Prints one tab-separated line per message (id, failed or retrying, attempts, queued at (UTC), to,
    subject, last error); with `retry`, the failed ones are sent again by the next pass of a sender."""
    with database_uri(settings) as uri:
        for line in asyncio.run(_failed(settings, uri, retry)):
            print(line)
    return 0
