"""Accounts by mail: forgotten passwords and confirmed addresses.

`forgot_password` answers alike whether the address has an account or not (nobody learns which
addresses do), and is throttled per address asked about and per client. The mail carries a
single-use token; `reset_password` sets the new password through the user repository's own write
path (its password rules apply; the token stands in for `current_password`), deletes the token and
revokes every token of the user. Verification links are signed and expire (`identity.verification`).
Mail is queued after the write it follows succeeded, and sent by the outbox's sender (`service.mail`).
"""
from typing import Any
from urllib.parse import quote

from service.core.declarations import Context, Restify
from service.core.identity import (VERIFIED, create_reset_token, email_hash, is_verified, link_state, resend_attempt,
                                   reset_attempt, revoke_tokens, send_verification, use_reset_token, verifies_email)
from service.core.operations.users import find_by_email, user_repository
from service.core.kernel import BadRequest, Forbidden, Unauthenticated, ValidationFailed
from service.core.writing import Write, now, write
from service.mail import enqueue
from storage import is_valid_id

RESET_SENT = "If an account uses that address, a link to reset its password is on its way."
BAD_TOKEN = "This password reset token is invalid or has expired."


def _strings(payload: dict[str, Any], *names: str) -> dict[str, str]:
    """The named members, each a non-empty string, or one 422 naming every one that is not."""
    errors = {name: [f"The {name.replace('_', ' ')} field is required." if payload.get(name) in (None, "")
                     else f"The {name.replace('_', ' ')} must be a string."]
              for name in names if not isinstance(payload.get(name), str) or not payload.get(name)}
    if errors:
        raise ValidationFailed(errors)
    return {name: payload[name] for name in names}


def _reset_link(app: Restify, context: Context, token: str, email: str) -> str:
    configured = str(app.settings.value("auth", "reset_url"))
    if configured:
        return configured.replace("{token}", quote(token)).replace("{email}", quote(email))
    prefix = str(app.settings.get("server", "auth_prefix")).rstrip("/")
    return f"{context.base_url}{prefix}/reset-password?token={quote(token)}&email={quote(email)}"


async def forgot_password(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """Queues a reset mail when `email` has an account; the answer is the same when it has none."""
    app = app.pinned()
    email = _strings(payload, "email")["email"]
    resource = user_repository(app)
    await reset_attempt(app, email, context.extras.get("address"))  # counted before anything is read
    user = await find_by_email(app, resource, email)
    if user is not None:
        token = await create_reset_token(app, user["id"])
        await enqueue(app.settings, app.db, str(user["email"]), "reset_password", {
            "name": str(user.get("name") or ""), "email": str(user["email"]), "token": token,
            "link": _reset_link(app, context, token, str(user["email"])),
            "minutes": str(int(app.settings.positive("auth", "reset_ttl")))})
    return {"message": RESET_SENT}


async def reset_password(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """Sets the password of the account whose reset token this is; 422 (`errors.token`) for a token
    that is wrong, used or expired."""
    app = app.pinned()
    given = _strings(payload, "email", "token")
    resource = user_repository(app)
    user = await find_by_email(app, resource, given["email"])
    if user is None or not await use_reset_token(app, user["id"], given["token"], keep=True):
        raise ValidationFailed({"token": [BAD_TOKEN]})
    context.action = "patch"
    context.user = resource.model(user)
    body = {name: payload.get(name) for name in ("password", "password_confirmation")}
    passwords = [f for f in resource.fields(context) if f.kind == "password"]
    if not passwords:
        raise BadRequest("The user repository has no password field.")
    if body["password"] in (None, ""):
        raise ValidationFailed({passwords[0].name: ["The password field is required."]})
    await write(Write(app, resource, passwords, context, {passwords[0].name: body["password"],
                                                          f"{passwords[0].name}_confirmation":
                                                          body["password_confirmation"]},
                      action="patch", existing=user, flags=False, answer=False, proven=True))
    # Used once: another request with the same token, racing this one, finds it gone.
    await use_reset_token(app, user["id"], given["token"])
    await revoke_tokens(app, user["id"])
    return {"message": "Your password has been reset."}


async def verify_email(app: Restify, user_id: str, hashed: str, context: Context) -> dict[str, Any]:
    """Marks the address confirmed for a valid signed link (`expires` and `signature` in the query)."""
    app = app.pinned()
    state = link_state(app, user_id, hashed, context.params.get("expires"), context.params.get("signature"))
    if state == "expired":
        raise Forbidden("This verification link has expired; ask for a new one.")
    resource = user_repository(app)
    user = await app.collection(resource).find_by_id(user_id) if state == "valid" and is_valid_id(user_id) else None
    if user is None or email_hash(str(user.get("email") or "")) != hashed:
        raise Forbidden("This verification link is invalid.")
    if not user.get(VERIFIED):
        await app.collection(resource).update(user_id, {VERIFIED: now()})
    return {"message": "Your email address is verified.", "verified": True}


async def resend_verification(app: Restify, context: Context) -> dict[str, Any]:
    """Queues a fresh verification mail for the logged-in user (throttled); nothing when confirmed."""
    app = app.pinned()
    if context.user is None:
        raise Unauthenticated()
    if is_verified(context.user):
        return {"message": "Your email address is already verified.", "verified": True}
    await resend_attempt(app, context.user.id)
    await send_verification(app, dict(context.user.attributes), context)
    return {"message": "A new verification link is on its way.", "verified": False}


async def after_registration(app: Restify, context: Context) -> None:
    """With `auth.verify_email`, the user just registered (`context.user`) gets a link to confirm."""
    if context.user is not None and verifies_email(app):
        await send_verification(app, dict(context.user.attributes), context)
