"""Single-use confirmations for destructive calls: a preview hands out `"<id>|<secret>"`, and only
the same user repeating the same call with it, within `SECONDS`, gets it back — once.

A confirmation is bound to the user, the call (its name and its arguments as canonical JSON)
and the versions of the records it previewed; the caller compares those versions with the
records as they are now. It lives in MongoDB (only a hash of the secret), so any process can
redeem what another issued, and removing it is the atomic step that makes it single-use.
"""
import hmac
import json
import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

from service.core.declarations import Restify, iso
from service.core.identity import digest
from service.core.writing import now
from storage import Filter, is_valid_id

CONFIRMATIONS = "confirmations"
SECONDS = 300



def canonical(arguments: dict[str, Any]) -> str:
    """The arguments as one text whatever their order: what a confirmation is bound to."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


async def issue(app: Restify, user_id: str, call: str, arguments: dict[str, Any],
                versions: dict[str, str]) -> tuple[str, str]:
    """A new confirmation for this call as previewed; returns (token, expires_at)."""
    confirmations = app.db.collection(CONFIRMATIONS)
    await confirmations.delete_where(Filter(before=("expires_at", now())))  # keep the collection small
    secret = secrets.token_urlsafe(32)
    expires = iso(datetime.now(timezone.utc) + timedelta(seconds=SECONDS))
    stored = await confirmations.insert({
        "user_id": user_id, "call": call, "arguments": digest(canonical(arguments)), "versions": versions,
        "hash": digest(secret), "expires_at": expires,
    })
    return f"{stored['id']}|{secret}", expires


async def redeem(app: Restify, user_id: str, call: str, arguments: dict[str, Any],
                 token: str) -> dict[str, str] | None:
    """The versions a confirmation previewed, using it up; None when it is wrong, used, expired or
    was issued for another user or another call."""
    token_id, _, secret = token.partition("|")
    if not secret or not is_valid_id(token_id):
        return None
    confirmations = app.db.collection(CONFIRMATIONS)
    stored = await confirmations.find_by_id(token_id)
    if stored is None or not hmac.compare_digest(stored.get("hash", ""), digest(secret)):
        return None
    if await confirmations.remove(token_id) is None:  # used meanwhile, here or on another process
        return None
    if stored.get("expires_at", "") <= now() or stored.get("user_id") != user_id or stored.get("call") != call \
            or stored.get("arguments") != digest(canonical(arguments)):
        return None
    return dict(stored.get("versions") or {})
