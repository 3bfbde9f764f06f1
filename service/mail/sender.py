"""The outbox's sender: messages are stored first (`enqueue`, after the request's write succeeded),
then sent by whichever `restify serve` process holds the sender's lease (`deliver`).

An attempt that fails is tried again after a wait that doubles from `mail.retry_seconds`, never
longer than a minute during the message's first hour, nor than `MAX_WAIT` afterwards; a message
still unsent after `mail.give_up_after_seconds`, or refused for good by the server, is marked
failed and kept (`restify mail:failed` lists it, `--retry` puts it back in line).
"""
import asyncio
import logging
import os
import socket
import time
import weakref
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from service.config import Settings
from service.mail.templates import render
from service.mail.transport import Permanent, Transient, send
from storage import Database, Outbox, StorageError

log = logging.getLogger("restify.mail")
LEASE = "mail-sender"
BATCH = 50
FIRST_HOUR, MAX_WAIT = 3600.0, 900.0
HOLDER = f"{socket.gethostname()}:{os.getpid()}"
_nudges: "weakref.WeakKeyDictionary[Database, asyncio.Event]" = weakref.WeakKeyDictionary()


async def enqueue(settings: Settings, db: Database, to: str, template: str, values: dict[str, str]) -> str:
    """Renders `template` for `to` and stores it in the outbox; a sender in this process is woken."""
    rendered = render(settings, template, values)
    id = await db.outbox().add({"to": to, "subject": rendered.subject, "text": rendered.text,
                                "html": rendered.html, "template": template})
    nudge = _nudges.get(db)
    if nudge is not None:
        nudge.set()
    return id


def wait_after(attempts: int, age: float, first: float) -> float:
    """Seconds before the next attempt of a message `age` seconds old that failed `attempts` times."""
    wait = first * 2 ** max(attempts - 1, 0)
    return min(wait, 60.0 if age < FIRST_HOUR else MAX_WAIT)


def _email(settings: Settings, stored: dict[str, Any]) -> EmailMessage:
    message = EmailMessage()
    message["From"] = str(settings.value("mail", "from"))
    message["To"] = stored["to"]
    message["Subject"] = stored["subject"]
    message["Message-ID"] = make_msgid(idstring=stored["id"])
    message.set_content(stored["text"])
    if stored.get("html"):
        message.add_alternative(stored["html"], subtype="html")
    return message


async def deliver(settings: Settings, db: Database, holder: str = HOLDER, now: float | None = None) -> int:
    """One pass of the sender: with the lease, tries every message whose time has come; how many were
    sent (0 without the lease). `now` moves the clock, so a test can make a retry come due."""
    outbox = db.outbox()
    lease = float(settings.positive("mail", "lease_seconds"))
    moment = time.time() if now is None else now
    if not await outbox.claim(LEASE, holder, lease, now=moment):
        return 0
    sent = 0
    for stored in await outbox.due(BATCH, now=moment):
        if not await outbox.claim(LEASE, holder, lease, now=moment):  # still ours, for this message too
            break
        try:
            message = _email(settings, stored)
        except (ValueError, TypeError) as error:  # a header no server would take: no attempt will do better
            await outbox.fail(stored["id"], f"not a valid message: {error}", now=moment)
            continue
        try:
            await send(settings, message, stored["id"])
        except Permanent as error:
            log.error("mail to %s refused for good: %s", stored["to"], error)
            await outbox.fail(stored["id"], str(error), now=moment)
            continue
        except Transient as error:
            await _retry_later(settings, outbox, stored, str(error), moment)
            continue
        await outbox.sent(stored["id"])
        sent += 1
    return sent


def retry_at(stored: dict[str, Any], moment: float, first: float, give_up_after: float) -> float | None:
    """When to try again an item (a message, a delivery) whose attempt failed at `moment`: its retries
    began at `since` (else `created_at`) and it failed `attempts` times before; None once it is too old."""
    age = moment - float(stored.get("since") or stored.get("created_at") or moment)
    if age >= give_up_after:
        return None
    return moment + wait_after(int(stored.get("attempts") or 0) + 1, age, first)


async def _retry_later(settings: Settings, outbox: Outbox, stored: dict[str, Any], error: str, moment: float) -> None:
    next_at = retry_at(stored, moment, float(settings.positive("mail", "retry_seconds")),
                       float(settings.positive("mail", "give_up_after_seconds")))
    if next_at is None:
        log.error("mail to %s not sent after %d attempts, given up: %s", stored["to"], stored["attempts"] + 1, error)
        await outbox.fail(stored["id"], error, now=moment)
        return
    log.warning("mail to %s not sent (%s); next attempt in %.0f s", stored["to"], error, next_at - moment)
    await outbox.postpone(stored["id"], next_at, error, now=moment)


async def run_sender(settings: Settings, db: Database, stop: asyncio.Event) -> None:
    """The sender of a `restify serve` process: a pass every `mail.poll_seconds`, and at once when
    this process queues a message; the lease makes one process at a time send."""
    nudge = _nudges.setdefault(db, asyncio.Event())
    poll = float(settings.positive("mail", "poll_seconds"))
    while not stop.is_set():
        nudge.clear()
        try:
            await deliver(settings, db)
        except StorageError as error:  # the database is away: the messages wait in it
            log.warning("mail sender: %s", error)
        except Exception:  # noqa: BLE001 - the sender outlives one bad pass; the messages stay in the outbox
            log.exception("mail sender failed; trying again in %.0f s", poll)
        waits = [asyncio.ensure_future(nudge.wait()), asyncio.ensure_future(stop.wait())]
        await asyncio.wait(waits, timeout=poll, return_when=asyncio.FIRST_COMPLETED)
        for waiting in waits:
            waiting.cancel()
    await db.outbox().release(LEASE, HOLDER)
