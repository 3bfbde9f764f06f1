"""The outbox: a message waits while the SMTP server is down, is retried with backoff, arrives once it
is up; one sender at a time (the lease); failures kept and listed by `restify mail:failed`."""
import time
from email.message import EmailMessage

import pytest

from service.config import Settings
from service.console.mail import _failed
from service.core.operations.accounts import RESET_SENT
from service.mail import deliver, enqueue, wait_after
from service.mail.transport import send


async def test_a_reset_while_the_smtp_server_is_down_waits_and_arrives_once_it_is_up(api, restify, smtp, ann):
    response = await api.post("/api/forgot-password", {"email": ann["email"]})  # the server is not started
    assert (response.status, response.json) == (202, {"message": RESET_SENT})
    outbox = restify.db.outbox()
    assert await deliver(restify.settings, restify.db) == 0
    (waiting,) = await outbox.waiting()
    assert (waiting["to"], waiting["attempts"], waiting["state"]) == (ann["email"], 1, "waiting")
    assert waiting["last_error"] and waiting["next_at"] > time.time()
    assert await deliver(restify.settings, restify.db) == 0  # not due yet: no second attempt
    assert (await outbox.waiting())[0]["attempts"] == 1

    smtp.start()
    assert await deliver(restify.settings, restify.db, now=waiting["next_at"]) == 1
    (message,) = smtp.inbox.messages
    assert (message["To"], message["Subject"]) == (ann["email"], "Reset your password")
    assert await outbox.waiting() == [] and await outbox.troubled() == []


def test_retries_come_at_least_every_minute_in_the_first_hour():
    waits = [wait_after(attempts, age=60.0 * attempts, first=5.0) for attempts in range(1, 40)]
    assert waits[:5] == [5.0, 10.0, 20.0, 40.0, 60.0] and max(waits) == 60.0
    assert wait_after(20, age=7200.0, first=5.0) == 900.0


@pytest.mark.parametrize("config", [{"mail": {"give_up_after_seconds": 600}}], indirect=True)
async def test_a_message_unsent_for_too_long_is_failed_kept_listed_and_retried_on_demand(restify, smtp):
    await enqueue(restify.settings, restify.db, "ann@example.com", "verify_email", {"link": "http://x"})
    later = time.time() + 601
    assert await deliver(restify.settings, restify.db, now=later) == 0
    (failed,) = await restify.db.outbox().troubled()
    assert (failed["state"], failed["attempts"]) == ("failed", 1)
    assert await deliver(restify.settings, restify.db, now=later + 3600) == 0  # given up: no more attempts
    assert (await restify.db.outbox().troubled())[0]["attempts"] == 1

    restify.settings.set("database", "name", restify.db.name)  # what `restify mail:failed` reads
    (line,) = await _failed(restify.settings, restify.db.uri, retry=False)
    assert line.split("\t")[1:3] == ["failed", "1 attempt(s)"] and line.split("\t")[4:6] == [
        "ann@example.com", "Confirm your email address"]
    smtp.start()
    listed, again = await _failed(restify.settings, restify.db.uri, retry=True)
    assert listed == line and again == "Put 1 failed message(s) back in line."
    assert await deliver(restify.settings, restify.db) == 1
    assert await _failed(restify.settings, restify.db.uri, retry=False) == ["No mail failed to send."]
    assert smtp.inbox.messages[0]["Subject"] == "Confirm your email address"


async def test_a_message_refused_for_good_is_failed_at_once(restify, smtp):
    smtp.inbox.refuse = {"gone@example.com"}
    smtp.start()
    await enqueue(restify.settings, restify.db, "gone@example.com", "verify_email", {"link": "http://x"})
    assert await deliver(restify.settings, restify.db) == 0
    (failed,) = await restify.db.outbox().troubled()
    assert failed["state"] == "failed" and "550" in failed["last_error"]


async def test_one_sender_at_a_time(restify, smtp):
    smtp.start()
    await enqueue(restify.settings, restify.db, "ann@example.com", "verify_email", {"link": "http://x"})
    outbox, lease = restify.db.outbox(), float(restify.settings.positive("mail", "lease_seconds"))
    assert await outbox.claim("mail-sender", "other-host:1", lease)
    assert await deliver(restify.settings, restify.db, holder="this-host:2") == 0  # the other holds the lease
    assert smtp.inbox.messages == []
    assert await deliver(restify.settings, restify.db, holder="this-host:2", now=time.time() + lease + 1) == 1
    assert len(smtp.inbox.messages) == 1
    assert not await outbox.claim("mail-sender", "other-host:1", lease)  # now this host's, while it runs


async def test_the_log_transport_writes_an_eml_file(tmp_path, caplog):
    settings = Settings({"mail": {"url": "log"}}, app_dir=tmp_path)
    message = EmailMessage()
    message["To"], message["Subject"] = "ann@example.com", "Hello"
    message.set_content("Hi")
    caplog.set_level("INFO", logger="restify.mail")
    await send(settings, message, "abc")
    (written,) = (tmp_path / "var" / "mail").glob("*-abc.eml")
    assert b"Subject: Hello" in written.read_bytes()
    assert "mail to ann@example.com: Hello" in caplog.text


async def test_templates_are_overridden_by_the_application(tmp_path, db):
    (tmp_path / "templates" / "mail").mkdir(parents=True)
    (tmp_path / "templates" / "mail" / "verify_email.txt").write_text("Subject: Bienvenue $name\n\nVoici: $link\n")
    settings = Settings({"mail": {"url": "log"}}, app_dir=tmp_path)
    await enqueue(settings, db, "ann@example.com", "verify_email", {"name": "Ann", "link": "http://x/<y>"})
    (stored,) = await db.outbox().waiting()
    assert (stored["subject"], stored["text"]) == ("Bienvenue Ann", "Voici: http://x/<y>\n")
    assert 'href="http://x/&lt;y&gt;"' in stored["html"]  # the framework's HTML, its values escaped


@pytest.mark.parametrize("config", [{"mail": {"starttls": "required"}}], indirect=True)
async def test_starttls_required_sends_nothing_in_clear(restify, smtp):
    smtp.start()  # a server that offers no STARTTLS
    await enqueue(restify.settings, restify.db, "ann@example.com", "verify_email", {"link": "http://x"})
    assert await deliver(restify.settings, restify.db) == 0
    (waiting,) = await restify.db.outbox().waiting()
    assert waiting["attempts"] == 1 and "STARTTLS" in waiting["last_error"]
    assert smtp.inbox.messages == []
