"""Registration, login, logout and bearer tokens (stored as `tokens` describes).

Passwords are argon2id hashes, made and checked in the hashing lane (`passwords`). Emails
are compared as the `email` rule stores them (`rules.email_key`): NFKC-normalized, trimmed and
lowercased.
"""
import asyncio
import hmac
from typing import Any

from service.core.declarations import Context, Model, Resource, Restify
from service.core.identity import (TOKENS, Known, abilities_of, create_token, digest, follow, identities,
                                   judge_password, login_attempt, mark_used, registration_attempt, revoke_tokens)
from service.core.kernel import Unauthenticated, ValidationFailed
from service.core.operations.accounts import after_registration
from service.core.operations.users import find_by_email, user_repository
from service.core.operations.tokens import checked_abilities
from service.core.reading import fill, serialize
from service.core.writing import Write, now, write
from storage import is_valid_id

BAD_CREDENTIALS = "These credentials do not match our records."


OTHER_RESOURCE = "This token is for another resource."


async def authenticate(app: Restify, token: str, audience: str | None = None) -> Model:
    """The user a bearer token belongs to; Unauthenticated for anything else. A token this process
    knows (identity.known) costs no read. An OAuth access token is bound to one resource (`<base>/mcp`)
    and taken only where the caller says it is that `audience`."""
    app = app.pinned()
    token_id, _, secret = token.partition("|")
    if not secret or not is_valid_id(token_id):
        raise Unauthenticated()
    resource = user_repository(app)
    remembered, key = identities(app), digest(token)
    stamp = (app.collection(resource).revision, app.db.collection(TOKENS).removals)
    known = remembered.get(key, stamp)
    if known is not None and not _expired(known.token):
        _for_audience(known.token, audience)
        await mark_used(app, known.token)
        return _as_model(resource, dict(known.user), known.token)
    generation = remembered.generation
    stored = await app.db.collection(TOKENS).find_by_id(token_id)
    if stored is None or not hmac.compare_digest(stored.get("token_hash", ""), digest(secret)):
        raise Unauthenticated()
    _for_audience(stored, audience)
    user = await _user_of(app, resource, stored)
    remembered.put(key, Known(stored, dict(user), stamp, 0.0), generation)
    await mark_used(app, stored)
    return _as_model(resource, user, stored)


def _for_audience(stored: dict[str, Any], audience: str | None) -> None:
    if stored.get("resource") is not None and stored["resource"] != audience:
        raise Unauthenticated(OTHER_RESOURCE)


def _expired(stored: dict[str, Any]) -> bool:
    expires = stored.get("expires_at")
    return isinstance(expires, str) and expires <= now()  # ISO strings of one format compare chronologically


async def _user_of(app: Restify, resource: Resource, stored: dict[str, Any]) -> dict[str, Any]:
    if _expired(stored):
        await app.db.collection(TOKENS).delete(stored["id"])
        raise Unauthenticated()
    user = await app.collection(resource).find_by_id(stored.get("user_id", ""))
    if user is None:
        raise Unauthenticated()
    return user


def _as_model(resource: Resource, user: dict[str, Any], stored: dict[str, Any]) -> Model:
    user["_token_id"] = stored["id"]
    user["_abilities"] = abilities_of(stored)  # what `Context.can` reads
    return resource.model(user)


async def token_user(app: Restify, stored: dict[str, Any]) -> Model:
    """The user of a stored token whose secret was checked (a bearer header, or the token a live-feed
    ticket acts for); Unauthenticated when it expired or its user is gone."""
    resource = user_repository(app)
    return _as_model(resource, await _user_of(app, resource, stored), stored)


async def follow_identities(app: Restify, stop: asyncio.Event) -> None:
    """Keeps who tokens are, as this process remembers them, in step with every process's writes
    (the tokens and users change streams) until `stop` is set."""
    resource = app.user_resource
    if resource is not None:
        await follow(app, resource.collection, stop)


def _with_token(data: dict[str, Any], token: str) -> dict[str, Any]:
    data["meta"]["token"] = token
    return data


async def create_user(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """Stores a user through the user repository's own fields and rules, on the write path every
    store takes (what register and seeders share); afterwards `context.user` is that user. Returns
    the user as the client sees it (`id`, `attributes`, `meta`)."""
    app = app.pinned()
    context.action = "store"
    resource = user_repository(app)
    await registration_attempt(app, context.extras.get("address"))  # counted before any work
    await app.ready()
    written = await write(Write(app, resource, resource.fields(context), context, payload, acts_as_written=True))
    return written.data


async def register(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """Creates a user, then a token."""
    app = app.pinned()
    user = await create_user(app, payload, context)
    await after_registration(app, context)
    return _with_token(user, await create_token(app, user["id"]))


async def login(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    app = app.pinned()
    email, password = payload.get("email"), payload.get("password")
    errors = {name: [f"The {name} field is required." if value in (None, "") else f"The {name} must be a string."]
              for name, value in (("email", email), ("password", password)) if not isinstance(value, str) or not value}
    if errors:
        raise ValidationFailed(errors)
    assert isinstance(email, str) and isinstance(password, str)  # the errors above say otherwise
    resource = user_repository(app)
    user = await signed_in(app, email, password, context)
    if user is None:
        raise Unauthenticated(BAD_CREDENTIALS)
    token = await create_token(app, user["id"])
    context.user = resource.model(user)
    user = dict(user)  # the answer's copy: computed values are added to it, never stored
    await fill(app, resource, context, [user])
    return _with_token(serialize(app, resource, context, user), token)


async def signed_in(app: Restify, email: str, password: str, context: Context) -> dict[str, Any] | None:
    """The user whose email and password these are, else None; counted by the login throttles (429
    past them) before anything is read, so a refused attempt costs no database read."""
    attempt = await login_attempt(app, email, context.extras.get("address"))
    user = await find_by_email(app, user_repository(app), email)
    hashed = user.get("password") if user else None
    if not await judge_password(app, attempt, hashed if isinstance(hashed, str) else None, password):
        return None
    return user


async def logout(app: Restify, payload: dict[str, Any], context: Context) -> None:
    """Revokes the request's token; with `{"all": true}`, every token of the user (every session and
    script, this one included)."""
    if context.user is None:
        raise Unauthenticated()
    every = payload.get("all", False)
    if every not in (True, False):
        raise ValidationFailed({"all": ["The all field must be true or false."]})
    if every:
        await revoke_tokens(app, context.user.id)
    else:
        await app.db.collection(TOKENS).delete(context.user._token_id)


async def user_id_for_email(app: Restify, email: str) -> str:
    user = await find_by_email(app, user_repository(app), email)
    if user is None:
        raise LookupError(f"no user with email {email!r}")
    return user["id"]


async def token_for_email(app: Restify, email: str, name: str = "console", abilities: list[str] | None = None) -> str:
    """A new token for the user with `email` (for `restify token:create`); `abilities` are checked as
    `POST <auth>/tokens` checks them (ValidationFailed names what is wrong), by default `*`."""
    held = checked_abilities(app, abilities if abilities is not None else ["*"], Context(door="console"))
    return await create_token(app, await user_id_for_email(app, email), name=name, abilities=held)


async def revoke_for_email(app: Restify, email: str) -> int:
    """Revokes every token of the user with `email` (for `restify token:revoke`)."""
    return await revoke_tokens(app, await user_id_for_email(app, email))
