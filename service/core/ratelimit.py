"""Login throttling, per account and per client address.

Failed attempts are records in MongoDB, so every web process and host counts
the same attempts. A success clears the account's failures.
"""
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from service.core.errors import TooManyRequests
from service.core.serializer import iso
from storage import Filter

if TYPE_CHECKING:
    from service.core.app import Restify

ATTEMPTS = "login_attempts"


def _keys(email: str, address: str | None) -> list[tuple[str, str]]:
    """(setting that limits it, key counted) pairs."""
    keys = [("login_attempts_per_account", f"account:{email.strip().lower()}")]
    if address:
        keys.append(("login_attempts_per_address", f"address:{address}"))
    return keys


async def check(app: "Restify", email: str, address: str | None) -> None:
    """TooManyRequests (with seconds to wait) when either key used up its attempts in the window."""
    window = int(app.settings.get("auth", "login_window_seconds"))
    now = datetime.now(timezone.utc)
    since = iso(now - timedelta(seconds=window))
    attempts = app.db.collection(ATTEMPTS)
    for setting, key in _keys(email, address):
        limit = int(app.settings.get("auth", setting) or 0)
        if limit <= 0:
            continue
        where = Filter(equals={"key": key}, since=("at", since))
        if await attempts.count(where) >= limit:
            oldest = (await attempts.find(where, sort=[("at", 1)], limit=1))[0]["at"]
            opened = datetime.fromisoformat(oldest.replace("Z", "+00:00"))
            wait = max(1, int((opened + timedelta(seconds=window) - now).total_seconds()) + 1)
            raise TooManyRequests(retry_after=wait)


async def failed(app: "Restify", email: str, address: str | None) -> None:
    now = datetime.now(timezone.utc)
    attempts = app.db.collection(ATTEMPTS)
    for _, key in _keys(email, address):
        await attempts.insert({"key": key, "at": iso(now)})
    window = int(app.settings.get("auth", "login_window_seconds"))
    # Old attempts no longer count; drop them so the collection stays small.
    await attempts.delete_where(Filter(before=("at", iso(now - timedelta(seconds=2 * window)))))


async def succeeded(app: "Restify", email: str) -> None:
    await app.db.collection(ATTEMPTS).delete_where(Filter(equals={"key": f"account:{email.strip().lower()}"}))
