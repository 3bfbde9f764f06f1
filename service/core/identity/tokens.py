"""Personal access tokens: `"<id>|<secret>"`, of which only the SHA-256 of the secret is stored,
so a leaked tokens collection grants nothing. Each carries its abilities (service.core.declarations.abilities),
a name, when it was made, last used and when it expires."""
import hashlib
import secrets
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from service.core.declarations import EVERYTHING, iso
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Context, Field, Resource, Restify

TOKENS = "personal_access_tokens"
GRANT = "oauth_grant"  # the `kind` of a token record that is an OAuth grant: never a bearer token itself
USED_EVERY = 60  # seconds: how stale `last_used_at` may be


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


async def issue_token(app: "Restify", user_id: str, name: str = "api", abilities: Sequence[str] | None = None,
                      expires_in: int | None = None,
                      bound: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """A new token of `user_id`: the bearer text `"<id>|<secret>"` (shown once, never stored) and the
    stored record. `abilities`: None gives `auth.login_abilities`; `expires_in`: seconds, else `auth.token_ttl`;
    `bound`: what an OAuth access token also carries (its `resource` and `grant_id`)."""
    secret = secrets.token_urlsafe(32)
    ttl = expires_in if expires_in is not None else _ttl(app)
    created = datetime.now(timezone.utc)
    stored = await app.db.collection(TOKENS).insert({
        "user_id": user_id, "name": name, "token_hash": digest(secret),
        "abilities": list(abilities if abilities is not None else login_abilities(app)),
        "created_at": iso(created), "last_used_at": None,
        "expires_at": iso(created + timedelta(seconds=ttl)) if ttl else None, **(bound or {}),
    })
    return f"{stored['id']}|{secret}", stored


async def create_token(app: "Restify", user_id: str, name: str = "api", abilities: Sequence[str] | None = None) -> str:
    """The bearer text of a new token (login, register, `restify token:create`)."""
    return (await issue_token(app, user_id, name, abilities))[0]


def login_abilities(app: "Restify") -> list[str]:
    """What tokens made by login and register may do (`auth.login_abilities`, by default `["*"]`)."""
    configured = app.settings.value("auth", "login_abilities")
    return [str(a) for a in configured] if isinstance(configured, (list, tuple)) else [EVERYTHING]


def abilities_of(stored: dict[str, Any]) -> list[str]:
    """A stored token's abilities; a token stored before abilities existed may do everything."""
    held = stored.get("abilities")
    return [str(a) for a in held] if isinstance(held, list) else [EVERYTHING]


def described(stored: dict[str, Any], current: str | None = None) -> dict[str, Any]:
    """A token as its owner sees it: never its secret nor the secret's hash. `current`: the id of the
    token the request came with."""
    return {"id": stored["id"], "name": stored.get("name"), "abilities": abilities_of(stored),
            "created_at": stored.get("created_at"), "last_used_at": stored.get("last_used_at"),
            "expires_at": stored.get("expires_at"), "current": stored["id"] == current,
            **({"client": stored["client"]} if stored.get("client") else {})}


async def tokens_of(app: "Restify", user_id: str) -> list[dict[str, Any]]:
    """Every token of a user, oldest first."""
    return await app.db.collection(TOKENS).find(Filter(equals={"user_id": user_id}), sort=[("id", 1)])


async def revoke_token(app: "Restify", user_id: str, token_id: str) -> bool:
    """Revokes one token of `user_id`; False when it is not theirs (or not there). An OAuth grant, or
    one of its access tokens, takes the whole grant with it: its refresh tokens and access tokens."""
    tokens = app.db.collection(TOKENS)
    stored = await tokens.find_one(Filter(equals={"id": token_id, "user_id": user_id}))
    if stored is None:
        return False
    family = stored.get("grant_id") or (stored["id"] if stored.get("kind") == GRANT else None)
    if family:
        await revoke_grant(app, str(family))
    return await tokens.delete_where(Filter(equals={"id": token_id, "user_id": user_id})) > 0 or bool(family)


async def revoke_grant(app: "Restify", grant_id: str) -> None:
    """An OAuth grant and every access token it gave (a leaked refresh token is worth nothing after)."""
    tokens = app.db.collection(TOKENS)
    await tokens.delete_where(Filter(equals={"grant_id": grant_id}))
    await tokens.delete_where(Filter(equals={"id": grant_id}))


async def mark_used(app: "Restify", stored: dict[str, Any]) -> None:
    """Sets `last_used_at`, at most once a minute per token: a read-mostly client costs one small
    write a minute, not one per request."""
    last = stored.get("last_used_at")
    if isinstance(last, str) and last > _written_at(int(time.time()) - USED_EVERY):
        return
    moment = iso(datetime.now(timezone.utc))
    await app.db.collection(TOKENS).update(stored["id"], {"last_used_at": moment})
    stored["last_used_at"] = moment  # a remembered token is not marked again for a minute


@lru_cache(maxsize=1)
def _written_at(second: int) -> str:
    # A moment to the second, written once a second rather than on every request: marking a token
    # up to a second late is all the rounding costs.
    return iso(datetime.fromtimestamp(second, timezone.utc))


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
