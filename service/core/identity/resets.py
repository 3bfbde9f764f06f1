"""Password reset tokens: one per user at a time, single-use, valid `auth.reset_ttl` minutes. Only
the SHA-256 of the secret is stored (as for access tokens), so a leaked collection resets nothing."""
import hmac
import secrets
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from service.core.identity.tokens import digest
from service.core.declarations import iso
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Restify

RESETS = "password_reset_tokens"


async def create_reset_token(app: "Restify", user_id: str) -> str:
    """A new reset token for the user; any earlier one stops working."""
    secret = secrets.token_urlsafe(32)
    created = datetime.now(timezone.utc)
    ttl = timedelta(minutes=float(app.settings.positive("auth", "reset_ttl")))
    resets = app.db.collection(RESETS)
    await resets.delete_where(Filter(equals={"user_id": user_id}))
    await resets.insert({"user_id": user_id, "token_hash": digest(secret), "created_at": iso(created),
                         "expires_at": iso(created + ttl)})
    return secret


async def use_reset_token(app: "Restify", user_id: str, token: str, keep: bool = False) -> bool:
    """Whether `token` is the user's current reset token and still valid; unless `keep`, it is used up
    (deleted), and True only for the one request that deleted it."""
    resets = app.db.collection(RESETS)
    stored = await resets.find_one(Filter(equals={"user_id": user_id}))
    if stored is None or not hmac.compare_digest(stored.get("token_hash", ""), digest(token)):
        return False
    if stored.get("expires_at", "") <= iso(datetime.now(timezone.utc)):
        return False
    return keep or await resets.delete_where(Filter(equals={"id": stored["id"]})) == 1
