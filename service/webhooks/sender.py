"""Sending: each webhook's deliveries POSTed by whichever `restify serve` process holds its lease.

A delivery's body is JSON (`id`, `event`, `record`, `sequence`, `data`), signed with the webhook's
secret (`X-Restify-Signature: sha256=<hex HMAC-SHA256 of the body>`) and named by
`X-Restify-Delivery` (the same on every attempt) and `X-Restify-Event`. A 2xx answer is success;
anything else (another status, a refused connection, no answer within `webhooks.timeout_seconds`)
is tried again after a wait that grows from `webhooks.retry_seconds` (as the mail's), until
`webhooks.retry_for` seconds have passed: then the delivery is failed (kept; `restify webhooks:failed`
lists it, `restify webhooks:replay` puts it back in line). A record's next delivery waits for the
previous one's success, so a receiver gets each record's changes in order; other records go on.
"""
import asyncio
import hashlib
import hmac
import json
import logging
import time
import weakref
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from service.config import Settings
from service.core.declarations import Resource, Restify, Webhook
from service.mail import HOLDER, retry_at
from service.webhooks.capture import UnknownUser, capture
from storage import Deliveries, StorageError

log = logging.getLogger("restify.webhooks")
BATCH = 200
PRUNE_EVERY = 3600.0  # seconds between two prunings of a webhook's sent deliveries by one process
# Per application, webhook key -> when this process last pruned its sent deliveries.
_PRUNED: "weakref.WeakKeyDictionary[Restify, dict[str, float]]" = weakref.WeakKeyDictionary()


def body_of(delivery: dict[str, Any]) -> bytes:
    return json.dumps({"id": delivery["id"], "event": delivery["event"], "record": delivery["record"],
                       "sequence": delivery["sequence"], **delivery["payload"]}, separators=(",", ":")).encode()


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def post(webhook: Webhook, delivery: dict[str, Any], timeout: float) -> str | None:
    """One attempt; None when the receiver took it, else why not."""
    body = body_of(delivery)
    headers = {"Content-Type": "application/json", "User-Agent": "Restify-Webhooks",
               "X-Restify-Signature": signature(webhook.secret, body), "X-Restify-Delivery": delivery["id"],
               "X-Restify-Event": delivery["event"]}
    try:
        response = await AsyncHTTPClient().fetch(webhook.url, method="POST", body=body, headers=headers,
                                                 request_timeout=timeout, connect_timeout=timeout,
                                                 follow_redirects=False, raise_error=False)
    except (HTTPClientError, OSError) as error:  # no answer in time, a refused connection, a bad address
        return str(error) or type(error).__name__
    return None if 200 <= response.code < 300 else f"HTTP {response.code}"


async def deliver(app: Restify, resource: Resource, webhook: Webhook, holder: str = HOLDER,
                  now: float | None = None) -> int:
    """One pass for one webhook: with its lease, captures its new changes and tries every delivery whose
    time has come; how many were sent (0 without the lease). `now` moves the clock (tests)."""
    settings, deliveries = app.settings, app.db.deliveries()
    key = webhook.key(resource.name)
    lease = f"webhook {key}"
    seconds = float(settings.positive("webhooks", "lease_seconds"))
    moment = time.time() if now is None else now
    if not await deliveries.claim(lease, holder, seconds, now=moment):
        return 0
    await capture(app, resource, webhook, deliveries, now=moment)
    blocked: set[str] = set()  # records whose earlier delivery has not succeeded
    sent = 0
    for delivery in await deliveries.waiting(key, BATCH):
        if delivery["record"] in blocked or float(delivery["next_at"]) > moment:
            blocked.add(delivery["record"])
            continue
        if not await deliveries.claim(lease, holder, seconds, now=moment):  # still ours, for this one too
            break
        error = await post(webhook, delivery, float(settings.positive("webhooks", "timeout_seconds")))
        if error is None:
            await deliveries.sent(delivery["id"], now=moment)
            sent += 1
            continue
        blocked.add(delivery["record"])
        await _retry_later(settings, deliveries, webhook, delivery, error, moment)
    await _prune(app, deliveries, key, moment)
    return sent


async def _prune(app: Restify, deliveries: Deliveries, key: str, moment: float) -> None:
    """Now and then, the sent deliveries older than `webhooks.keep_sent_seconds` go (each record's latest
    stays: it numbers the record's next delivery)."""
    keep = app.settings.cap("webhooks", "keep_sent_seconds")
    pruned_at = _PRUNED.setdefault(app.origin, {})
    if keep is None or moment - pruned_at.get(key, float("-inf")) < PRUNE_EVERY:
        return
    pruned_at[key] = moment
    pruned = await deliveries.prune_sent(key, moment - keep)
    if pruned:
        log.info("webhook %s: %d sent deliveries older than %d s pruned", key, pruned, keep)


async def _retry_later(settings: Settings, deliveries: Deliveries, webhook: Webhook, delivery: dict[str, Any],
                       error: str, moment: float) -> None:
    next_at = retry_at(delivery, moment, float(settings.positive("webhooks", "retry_seconds")),
                       float(settings.positive("webhooks", "retry_for")))
    if next_at is None:
        log.error("webhook %s: delivery %s failed for good after %d attempts: %s", webhook.url, delivery["id"],
                  delivery["attempts"] + 1, error)
        await deliveries.fail(delivery["id"], error, now=moment)
        return
    log.warning("webhook %s: delivery %s not taken (%s); next attempt in %.1f s", webhook.url, delivery["id"],
                error, next_at - moment)
    await deliveries.postpone(delivery["id"], next_at, error, now=moment)


def declared(app: Restify) -> list[tuple[Resource, Webhook]]:
    return [(resource, webhook) for resource in app.registry.resources.values() for webhook in resource.webhooks]


async def place(app: Restify) -> None:
    """Gives each webhook met for the first time its place in its collection's changes: now. Called before
    a process serves, so no change of its first requests is missed."""
    deliveries = app.db.deliveries()
    if declared(app):
        await deliveries.prepare()
    for resource, webhook in declared(app):
        key = webhook.key(resource.name)
        try:
            if await deliveries.cursor(key) is None:
                await deliveries.begin(key, await app.db.position(resource.collection))
        except StorageError as error:  # e.g. no change streams: said at start, and at each pass after
            log.error("webhook %s cannot follow %s: %s", webhook.url, resource.collection, error)


async def run_webhooks(app: Restify, stop: asyncio.Event) -> None:
    """The webhooks' senders of a `restify serve` process: a pass every `webhooks.poll_seconds`; each
    webhook's lease makes one process at a time send its deliveries."""
    poll = float(app.settings.positive("webhooks", "poll_seconds"))
    while not stop.is_set():
        for resource, webhook in declared(app.pinned()):
            try:
                await deliver(app, resource, webhook)
            except (StorageError, UnknownUser) as error:  # the deliveries wait in the database
                log.warning("webhook %s: %s", webhook.url, error)
            except Exception:  # noqa: BLE001 - the sender outlives one bad pass; the deliveries stay stored
                log.exception("webhook %s failed; trying again in %.0f s", webhook.url, poll)
        try:
            await asyncio.wait_for(stop.wait(), timeout=poll)
        except asyncio.TimeoutError:
            pass
    deliveries = app.db.deliveries()
    for resource, webhook in declared(app):
        await deliveries.release(f"webhook {webhook.key(resource.name)}", HOLDER)
