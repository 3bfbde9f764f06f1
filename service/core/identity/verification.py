"""Email verification: signed, expiring links, and who counts as verified.

A link is `<auth_prefix>/verify-email/<user id>/<sha256 of the address>?expires=<unix time>&signature=<hex>`;
the signature is an HMAC-SHA256 of the path and `expires` (the URL without its host, so a proxy that
rewrites the host does not break it) under a key derived from `auth.signing_secret` (unset: from the
cursor key, `query.cursor_secret` or `var/cursor.key`). The hash in the path ties the link to the
address it was sent to: after a change of address, a link to the old one confirms nothing.

A confirmed user carries `email_verified_at` (an ISO time), which policies read as
`user.email_verified_at`; with `auth.require_verified`, a user without it may not write.
"""
import hashlib
import hmac
import time
from typing import TYPE_CHECKING, Any

from service.core.declarations import email_key
from service.core.kernel import EmailNotVerified
from service.core.reading import cursor_key
from service.mail import enqueue

if TYPE_CHECKING:
    from service.core.declarations import Context, Resource, Restify

VERIFIED = "email_verified_at"
# What a user may not do before confirming their address (`auth.require_verified`): every write of a record.
WRITES = frozenset({"store", "update", "patch", "delete", "attach", "detach", "sync", "action"})
_LABEL = b"restify signed links v1"


def _key(app: "Restify") -> bytes:
    configured = app.settings.value("auth", "signing_secret")
    secret = str(configured).encode() if configured else cursor_key(app.settings)
    return hmac.new(secret, _LABEL, hashlib.sha256).digest()


def email_hash(email: str) -> str:
    return hashlib.sha256(email_key(email).encode()).hexdigest()


def _path(app: "Restify", user_id: str, hashed: str) -> str:
    return f"{str(app.settings.get('server', 'auth_prefix')).rstrip('/')}/verify-email/{user_id}/{hashed}"


def verification_path(app: "Restify", user_id: str, email: str) -> str:
    return _path(app, user_id, email_hash(email))


def _signature(app: "Restify", path: str, expires: str) -> str:
    return hmac.new(_key(app), f"{path}?expires={expires}".encode(), hashlib.sha256).hexdigest()


def signed_link(app: "Restify", base_url: str, user_id: str, email: str) -> str:
    expires = str(int(time.time()) + 60 * int(app.settings.positive("auth", "verify_ttl")))
    path = verification_path(app, user_id, email)
    return f"{base_url}{path}?expires={expires}&signature={_signature(app, path, expires)}"


def link_state(app: "Restify", user_id: str, hashed: str, expires: Any, signature: Any) -> str:
    """"valid", "expired" (signed by us, but late) or "invalid" (forged, altered or incomplete)."""
    if not isinstance(expires, str) or not isinstance(signature, str) or not expires.isdigit():
        return "invalid"
    if not hmac.compare_digest(_signature(app, _path(app, user_id, hashed), expires), signature):
        return "invalid"
    return "valid" if int(expires) > time.time() else "expired"


def verifies_email(app: "Restify") -> bool:
    """`auth.verify_email`: registrations and changes of address mail a link to confirm it."""
    return app.settings.get("auth", "verify_email") is True


def is_verified(user: Any) -> bool:
    return bool(getattr(user, VERIFIED, None))


def refuse_unverified(app: "Restify", context: "Context") -> None:
    """EmailNotVerified for a write by an unconfirmed user while `auth.require_verified` is on."""
    if (context.action in WRITES and context.user is not None and not is_verified(context.user)
            and app.settings.get("auth", "require_verified") is True):
        raise EmailNotVerified()


def _base_url(app: "Restify", context: "Context") -> str:
    if context.base_url:
        return context.base_url
    return f"http://{app.settings.get('server', 'host')}:{app.settings.get('server', 'port')}"


async def send_verification(app: "Restify", user: dict[str, Any], context: "Context") -> None:
    """Queues the mail with a fresh link to confirm `user`'s current address."""
    email = str(user.get("email") or "")
    if not email:
        return
    link = signed_link(app, _base_url(app, context), user["id"], email)
    await enqueue(app.settings, app.db, email, "verify_email", {
        "name": str(user.get("name") or ""), "email": email, "link": link,
        "minutes": str(int(app.settings.positive("auth", "verify_ttl")))})


def _changes_address(app: "Restify", resource: "Resource", existing: dict[str, Any] | None,
                     email: Any) -> bool:
    users = app.user_resource
    return (verifies_email(app) and existing is not None and users is not None
            and users.name == resource.name and isinstance(email, str)
            and email_key(email) != email_key(str(existing.get("email") or "")))


def unverified_on_change(app: "Restify", resource: "Resource", existing: dict[str, Any] | None,
                         values: dict[str, Any]) -> dict[str, Any]:
    """What a user's update also sets: a new address is not confirmed yet."""
    return {VERIFIED: None} if _changes_address(app, resource, existing, values.get("email")) else {}


async def after_address_change(app: "Restify", resource: "Resource", existing: dict[str, Any] | None,
                               document: dict[str, Any], context: "Context") -> None:
    """After the write: a user whose address changed gets a link to confirm the new one."""
    if _changes_address(app, resource, existing, document.get("email")):
        await send_verification(app, document, context)
