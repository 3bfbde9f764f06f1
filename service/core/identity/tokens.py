"""Personal access tokens: `"<id>|<secret>"`, of which only the SHA-256 of the secret is stored,
so a leaked tokens collection grants nothing."""
import hashlib
import secrets
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from service.core.reading import iso
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Context, Field, Resource, Restify

TOKENS = "personal_access_tokens"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _ttl(app: "Restify") -> int | None:
    """`auth.token_ttl` in seconds; unset, zero or negative means tokens do not expire."""
    raw = app.settings.get("auth", "token_ttl")
    try:
        ttl = int(raw) if raw not in (None, "") else 0
    except (TypeError, ValueError):
        return None
    return ttl if ttl > 0 else None


async def create_token(app: "Restify", user_id: str, name: str = "api") -> str:
    secret = secrets.token_urlsafe(32)
    ttl = _ttl(app)
    created = datetime.now(timezone.utc)
    stored = await app.db.collection(TOKENS).insert({
        "user_id": user_id, "name": name, "token_hash": digest(secret), "created_at": iso(created),
        "expires_at": iso(created + timedelta(seconds=ttl)) if ttl else None,
    })
    return f"{stored['id']}|{secret}"


async def revoke_tokens(app: "Restify", user_id: str, keep: str | None = None) -> int:
    """Revokes every token of a user (all sessions, all scripts) but `keep`; returns how many."""
    tokens = app.db.collection(TOKENS)
    if keep is None:
        return await tokens.delete_where(Filter(equals={"user_id": user_id}))
    others = [t["id"] for t in await tokens.find(Filter(equals={"user_id": user_id})) if t["id"] != keep]
    return await tokens.delete_where(Filter(within=("id", tuple(others)))) if others else 0


def _is_users(app: "Restify", resource: "Resource") -> bool:
    users = app.user_resource
    return users is not None and users.name == resource.name


async def after_user_update(app: "Restify", resource: "Resource", fields: list["Field"], values: dict[str, Any],
                            user_id: str, context: "Context") -> None:
    """A new password ends every other session of that user: whoever held a token (a thief
    included) must log in with it. The token that made the change stays."""
    if _is_users(app, resource) and any(f.kind == "password" and values.get(f.name) is not None for f in fields):
        await revoke_tokens(app, user_id, keep=context.user._token_id if context.user is not None else None)


async def after_user_delete(app: "Restify", resource: "Resource", user_id: str) -> None:
    """A deleted user's tokens go with them."""
    if _is_users(app, resource):
        await revoke_tokens(app, user_id)
