"""Single-use tickets for live feeds: a browser's `EventSource` cannot send an Authorization
header, and a token must never travel in a URL (logs, history, referrers keep URLs).

`POST <prefix>/<r>/events/ticket` (bearer token) gives `"<id>|<secret>"`, valid for
`live.ticket_seconds` (60) and for that repository's feed only; `GET <prefix>/<r>/events?ticket=...`
redeems it once. Only a hash of the secret is stored, in MongoDB, so any process redeems it.
A ticket acts for the token that asked for it: revoking that token ends the feed.
"""
import hmac
import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

from service.core.declarations import READ, Context, Model, Restify, iso
from service.core.identity import digest
from service.core.kernel import Unauthenticated
from service.core.operations import TOKENS, enter, now, token_user
from storage import is_valid_id

TICKETS = "live_tickets"



async def issue(app: Restify, name: str, context: Context) -> dict[str, Any]:
    if context.user is None:
        raise Unauthenticated()
    enter(app, name, context, READ)
    secret = secrets.token_urlsafe(32)
    seconds = int(app.settings.number("live", "ticket_seconds"))  # 0 or less: tickets expire at once
    expires = iso(datetime.now(timezone.utc) + timedelta(seconds=seconds))
    stored = await app.db.collection(TICKETS).insert({
        "resource": name, "token_id": context.user._token_id, "hash": digest(secret), "expires_at": expires,
    })
    return {"data": {"ticket": f"{stored['id']}|{secret}", "expires_at": expires}}


async def redeem(app: Restify, name: str, ticket: str, use: bool = True) -> Model:
    """The user a ticket acts for; Unauthenticated for a wrong, used, expired or foreign ticket.
    `use=False` checks it without using it up (a HEAD of the feed opens no stream)."""
    ticket_id, _, secret = ticket.partition("|")
    if not secret or not is_valid_id(ticket_id):
        raise Unauthenticated()
    tickets = app.db.collection(TICKETS)
    stored = await tickets.find_by_id(ticket_id)
    if stored is None or not hmac.compare_digest(stored.get("hash", ""), digest(secret)) \
            or stored.get("resource") != name:
        raise Unauthenticated()
    if use and await tickets.remove(ticket_id) is None:  # redeemed meanwhile, here or on another process
        raise Unauthenticated()
    if stored.get("expires_at", "") <= now():
        raise Unauthenticated()
    return await _token_user(app, stored.get("token_id", ""))


async def _token_user(app: Restify, token_id: str) -> Model:
    token = await app.db.collection(TOKENS).find_by_id(token_id) if is_valid_id(token_id) else None
    if token is None or app.user_resource is None:
        raise Unauthenticated()
    return await token_user(app, token)
