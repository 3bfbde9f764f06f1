"""The token endpoint (codes and refresh tokens) and revocation (RFC 7009).

An access token is one of the service's own bearer tokens, with the granted scopes as its abilities,
bound to the resource (`/mcp` refuses a token for another, and the other doors refuse OAuth tokens),
valid `oauth.access_ttl` seconds. A refresh token is rotated on each use; a replaced one presented
again revokes the grant and every token it gave.
"""
import base64
import hashlib
import hmac
from typing import Any

from service.core.declarations import Context, Restify
from service.core.identity import (TOKENS, create_grant, digest, grant_by_refresh, issue_token, revoke_grant,
                                   rotate_refresh, take_code)
from service.core.kernel import OAuthError
from service.core.operations.oauth import resource_url
from storage import is_valid_id

REFRESH_REFUSALS = {"unknown": "The refresh token is invalid.", "expired": "The refresh token has expired.",
                    "client": "The refresh token was issued to another client.",
                    "reused": "The refresh token was used already; the grant is revoked."}


def _given(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value:
        raise OAuthError("invalid_request", f"The {name} parameter is required.")
    return value


def pkce_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 S256: BASE64URL(SHA256(verifier)) without padding equals the challenge."""
    if not 43 <= len(verifier) <= 128:
        return False
    derived = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace")).digest()).rstrip(b"=")
    return hmac.compare_digest(derived.decode(), challenge)


async def _access(app: Restify, grant: dict[str, Any]) -> dict[str, Any]:
    ttl = int(app.settings.positive("oauth", "access_ttl"))
    token, _ = await issue_token(app, grant["user_id"], f"{grant['name']} (access)", grant["abilities"], ttl,
                                 bound={"resource": grant["resource"], "grant_id": grant["id"]})
    return {"access_token": token, "token_type": "Bearer", "expires_in": ttl, "scope": " ".join(grant["abilities"])}


async def exchange(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """POST /oauth/token: `authorization_code` or `refresh_token`."""
    app = app.pinned()
    kind = payload.get("grant_type")
    if kind == "authorization_code":
        return await _from_code(app, payload, context)
    if kind == "refresh_token":
        return await _from_refresh(app, payload, context)
    raise OAuthError("unsupported_grant_type", "The grant_type must be authorization_code or refresh_token.")


async def _from_code(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    code, client_id = _given(payload, "code"), _given(payload, "client_id")
    verifier = payload.get("code_verifier")
    if not isinstance(verifier, str) or not verifier:
        raise OAuthError("invalid_request", "The code_verifier parameter is required (PKCE).")
    stored = await take_code(app, code)  # used up now, whatever follows: a code works once
    if stored is None:
        raise OAuthError("invalid_grant", "The authorization code is invalid, expired or used already.")
    if stored["client_id"] != client_id:
        raise OAuthError("invalid_grant", "The authorization code was issued to another client.")
    if payload.get("redirect_uri") != stored["redirect_uri"]:
        raise OAuthError("invalid_grant", "The redirect_uri does not match the authorization request's.")
    if not pkce_matches(verifier, stored["challenge"]):
        raise OAuthError("invalid_grant", "The code_verifier does not match the code_challenge.")
    if payload.get("resource") not in (None, stored["resource"]):
        raise OAuthError("invalid_target", f"The resource must be {stored['resource']}.")
    refresh, grant = await create_grant(app, stored["user_id"], {
        "name": stored["client_name"], "client": {"id": client_id, "name": stored["client_name"]},
        "client_id": client_id, "abilities": stored["scopes"], "resource": stored["resource"]})
    return {**await _access(app, grant), "refresh_token": refresh}


async def _from_refresh(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    refresh, client_id = _given(payload, "refresh_token"), _given(payload, "client_id")
    if payload.get("resource") not in (None, resource_url(app, context)):
        raise OAuthError("invalid_target", f"The resource must be {resource_url(app, context)}.")
    rotated = await rotate_refresh(app, refresh, client_id)
    if isinstance(rotated, str):
        raise OAuthError("invalid_grant", REFRESH_REFUSALS[rotated])
    fresh, grant = rotated
    asked = payload.get("scope")
    if asked is not None and not set(str(asked).split()) <= set(grant["abilities"]):
        raise OAuthError("invalid_scope", "A refresh may not ask for more than was granted.")
    narrowed = {**grant, "abilities": str(asked).split()} if asked else grant
    return {**await _access(app, narrowed), "refresh_token": fresh}


async def revoke(app: Restify, payload: dict[str, Any], context: Context) -> None:
    """RFC 7009: a refresh token revokes its grant, an access token itself; an unknown token is no error."""
    app = app.pinned()
    token = _given(payload, "token")
    grant = await grant_by_refresh(app, token)
    if grant is not None:
        await revoke_grant(app, grant["id"])
        return
    token_id, _, secret = token.partition("|")
    tokens = app.db.collection(TOKENS)
    stored = await tokens.find_by_id(token_id) if secret and is_valid_id(token_id) else None
    if stored is not None and stored.get("grant_id") and hmac.compare_digest(stored.get("token_hash", ""),
                                                                             digest(secret)):
        await tokens.delete(stored["id"])
