"""OAuth grants, their refresh tokens and authorization codes, kept as records.

A grant is a record of the tokens collection (`kind: oauth_grant`), so the user lists and revokes it
with their other tokens; it holds the client, the scopes granted, the resource, and the SHA-256 of
its current refresh token plus those of the ones it replaced. A refresh token is `"<grant id>|<secret>"`;
presenting a replaced one means it was copied: the whole grant goes (reuse detection). Rotation is
one versioned write, so of two requests with the same refresh token one wins and the other is reuse.

An authorization code is a record of `oauth_codes` (its SHA-256 only), deleted by the one exchange
that takes it.
"""
import hmac
import secrets
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from service.core.identity.tokens import GRANT, TOKENS, digest, iso, revoke_grant
from storage import Filter, Stale, is_valid_id, version_of

if TYPE_CHECKING:
    from service.core.declarations import Restify

CODES = "oauth_codes"
MAX_SPENT = 100  # replaced refresh tokens remembered per grant, for reuse detection


def _moment(seconds: float = 0) -> str:
    return iso(datetime.now(timezone.utc) + timedelta(seconds=seconds))


async def issue_code(app: "Restify", values: dict[str, Any]) -> str:
    """A new authorization code for `values` (user, client, redirect URI, scopes, resource, challenge)."""
    secret = secrets.token_urlsafe(32)
    await app.db.collection(CODES).insert({**values, "code_hash": digest(secret),
                                           "expires_at": _moment(app.settings.positive("oauth", "code_ttl"))})
    return secret


async def take_code(app: "Restify", code: str) -> dict[str, Any] | None:
    """The code's record, deleted: None when it is unknown, used already or expired."""
    codes = app.db.collection(CODES)
    stored = await codes.find_one(Filter(equals={"code_hash": digest(code)}))
    if stored is None or await codes.delete_where(Filter(equals={"id": stored["id"]})) != 1:
        return None
    return stored if stored.get("expires_at", "") > _moment() else None


async def create_grant(app: "Restify", user_id: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A new grant of `user_id` (`values`: name, client, client_id, abilities, resource) and its first
    refresh token."""
    secret = secrets.token_urlsafe(32)
    stored = await app.db.collection(TOKENS).insert({
        **values, "user_id": user_id, "kind": GRANT, "refresh_hash": digest(secret), "spent": [],
        "created_at": _moment(), "last_used_at": None,
        "expires_at": _moment(app.settings.positive("oauth", "refresh_ttl"))})
    return f"{stored['id']}|{secret}", stored


async def rotate_refresh(app: "Restify", refresh: str, client_id: str) -> tuple[str, dict[str, Any]] | str:
    """A new refresh token for the grant `refresh` belongs to, the old one spent; or why not:
    "unknown", "expired", "client" (another client's) or "reused" (a replaced one: the grant is revoked)."""
    grant_id, _, secret = refresh.partition("|")
    tokens = app.db.collection(TOKENS)
    grant = await tokens.find_by_id(grant_id) if secret and is_valid_id(grant_id) else None
    if grant is None or grant.get("kind") != GRANT:
        return "unknown"
    hashed = digest(secret)
    if hashed in grant.get("spent", []):
        await revoke_grant(app, grant["id"])
        return "reused"
    if not hmac.compare_digest(grant.get("refresh_hash", ""), hashed):
        return "unknown"
    if grant.get("client_id") != client_id:
        return "client"
    if grant.get("expires_at", "") <= _moment():
        await revoke_grant(app, grant["id"])
        return "expired"
    fresh = secrets.token_urlsafe(32)
    changes = {"refresh_hash": digest(fresh), "spent": [*grant.get("spent", []), hashed][-MAX_SPENT:],
               "last_used_at": _moment(), "expires_at": _moment(app.settings.positive("oauth", "refresh_ttl"))}
    try:
        swapped = await tokens.swap(grant["id"], changes, versions=[version_of(grant)])
    except Stale:  # the same refresh token, used by another request just now
        await revoke_grant(app, grant["id"])
        return "reused"
    if swapped is None:
        return "unknown"
    return f"{grant['id']}|{fresh}", swapped[1]


async def grant_by_refresh(app: "Restify", refresh: str) -> dict[str, Any] | None:
    """The grant whose current or a replaced refresh token `refresh` is (for revocation)."""
    grant_id, _, secret = refresh.partition("|")
    grant = await app.db.collection(TOKENS).find_by_id(grant_id) if secret and is_valid_id(grant_id) else None
    if grant is None or grant.get("kind") != GRANT:
        return None
    hashed = digest(secret)
    known = hmac.compare_digest(grant.get("refresh_hash", ""), hashed) or hashed in grant.get("spent", [])
    return grant if known else None
