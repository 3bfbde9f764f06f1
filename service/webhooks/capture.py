"""Capturing: a webhook's changes, read from its collection's change stream after the webhook's stored
resume token, become deliveries (stored before their first attempt) and the token moves past them.

Why a change stream and not a record written by the write path: every change reaches the stream,
whoever made it (a request, an action, the console, a seeder, another program), and the stream keeps
what happened while no `serve` process ran; the token is stored with the deliveries, so a sender that
stops (a crash, a restart) goes on where the last one stopped. A delivery's id is derived from the
change's token, so reading the same changes again adds nothing.

Each change is judged as the webhook's user (a guest, or `Webhook(user=<email>)`) would see the record
by `show`, and presented as REST presents it; a change they cannot see is not sent, and an update
that takes a record they received out of their view is a `deleted` for them. A delete is judged on
the record as it was (the embedded server gives it; MongoDB with `live.pre_images`), else sent only
for a record the webhook delivered before.
"""
import logging
import uuid
from typing import Any

from service.core.declarations import Budget, Context, Resource, Restify, Webhook
from service.core.operations import find_by_email, user_repository
from service.core.reading import visibility_of, with_relations
from storage import Change, Deliveries, HistoryLost

log = logging.getLogger("restify.webhooks")
ACTIONS = {"insert": "created", "update": "updated", "delete": "deleted"}
CAPTURE_LIMIT = 100_000  # a webhook further behind than this lost its place (logged; on from now)


class UnknownUser(Exception):
    """The webhook's user has no account (yet): nothing is captured until they have."""


def delivery_id(key: str, token: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"restify-webhook:{key}:{token}"))


async def context_of(app: Restify, webhook: Webhook) -> Context:
    """The reader the webhook's payloads are made for: REST's `show`, as a guest or as `webhook.user`."""
    if webhook.user is None:
        return Context(door="rest", action="show")
    users = user_repository(app)
    found = await find_by_email(app, users, webhook.user)
    if found is None:
        raise UnknownUser(f"no user has the email {webhook.user!r}")
    return Context(user=users.model(found), door="rest", action="show")


async def _presented(app: Restify, resource: Resource, context: Context,
                     document: dict[str, Any] | None) -> dict[str, Any] | None:
    if document is None or not visibility_of(app, resource, context.user).admits(document):
        return None
    return await with_relations(app, resource, context, document, spent=Budget(None))


async def _judged(app: Restify, resource: Resource, context: Context, change: Change,
                  last: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The action and `data` the change is for this reader, or None when it is nothing to them."""
    received = last is not None and last["event"].rpartition(".")[2] != "deleted"
    gone = {"id": change.id, "type": resource.name}
    if change.operation == "delete":
        seen = visibility_of(app, resource, context.user).admits(change.document) if change.document else received
        return ("deleted", gone) if seen else None
    data = await _presented(app, resource, context, change.document)
    if data is not None:
        return ACTIONS[change.operation], data
    if change.operation == "update" and received and change.document is not None:
        return "deleted", gone  # it left their view
    return None


async def capture(app: Restify, resource: Resource, webhook: Webhook, deliveries: Deliveries,
                  now: float | None = None) -> int:
    """Reads the webhook's changes since its token into deliveries, due at `now`; how many were made."""
    key = webhook.key(resource.name)
    cursor = await deliveries.cursor(key)
    if cursor is None or cursor.get("token") is None:
        await deliveries.begin(key, await app.db.position(resource.collection))
        return 0
    try:
        changes = await app.db.changes_since(resource.collection, cursor["token"], CAPTURE_LIMIT,
                                             bool(app.settings.value("live", "pre_images")))
    except HistoryLost as error:  # the database no longer holds them: said loudly, then on from now
        log.error("webhook %s lost the changes of %s after its token (%s); it goes on from now",
                  webhook.url, resource.collection, error)
        await deliveries.capture(key, [], await app.db.position(resource.collection), int(cursor.get("order") or 0))
        return 0
    if not changes:
        return 0
    context = await context_of(app, webhook)
    order, made, last = int(cursor.get("order") or 0), [], {}
    for change in changes:
        id = delivery_id(key, change.token)
        if change.id not in last:
            last[change.id] = await deliveries.last(key, change.id)
        stored = await deliveries.find(id)
        if stored is not None:  # captured by a pass that stopped before moving the token
            last[change.id], order = stored, max(order, int(stored["order"]) + 1)
            continue
        judged = await _judged(app, resource, context, change, last[change.id])
        event = f"{resource.name}.{judged[0]}" if judged else ""
        if judged is None or event not in webhook.events:
            continue
        previous = last[change.id]
        delivery = {"id": id, "record": change.id, "sequence": (previous["sequence"] if previous else 0) + 1,
                    "order": order, "event": event, "payload": {"data": judged[1]}}
        made.append(delivery)
        last[change.id], order = delivery, order + 1
    await deliveries.capture(key, made, changes[-1].token, order, now=now)
    return len(made)
