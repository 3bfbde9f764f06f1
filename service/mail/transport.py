"""How a message leaves: `mail.url` names the way.

    log                         written to `var/mail/<time>-<id>.eml` in the app directory, and a log line
    smtp://user:pass@host:port  SMTP, upgraded with STARTTLS when the server offers it (`mail.starttls =
                                "required"`: refused unless it does)
    smtps://user:pass@host:port SMTP over TLS from the first byte (port 465 unless named)

A send that fails raises `Transient` (worth trying again: the server is down, busy, or answered 4xx)
or `Permanent` (the server refused the message for good: 5xx).
"""
import logging
import time
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

import aiosmtplib

from service.config import Settings

log = logging.getLogger("restify.mail")
LOG_DIR = Path("var") / "mail"


class Transient(Exception):
    """The message may go through on a later attempt."""


class Permanent(Exception):
    """The server refused the message for good."""


async def send(settings: Settings, message: EmailMessage, name: str) -> None:
    """Sends `message` the way `mail.url` says; `name` (the outbox id) names its `.eml` file."""
    url = str(settings.value("mail", "url")).strip()
    if url == "log":
        _write(settings, message, name)
        return
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise Permanent(f"mail.url must be log, smtp://host:port or smtps://host:port, not {parts.scheme or url!r}")
    tls = parts.scheme == "smtps"
    required = str(settings.value("mail", "starttls")).lower() == "required"
    try:
        await aiosmtplib.send(
            message, hostname=parts.hostname, port=parts.port or (465 if tls else 25),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            use_tls=tls, start_tls=None if tls else (True if required else None),
            timeout=float(settings.positive("mail", "timeout")))
    except aiosmtplib.SMTPRecipientsRefused as error:
        _raise_by_codes([refused.code for refused in error.recipients], error)
    except aiosmtplib.SMTPResponseException as error:
        _raise_by_codes([error.code], error)
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
        raise Transient(str(error) or type(error).__name__) from None


def _raise_by_codes(codes: list[int], error: Exception) -> None:
    if codes and all(code >= 500 for code in codes):
        raise Permanent(str(error)) from None
    raise Transient(str(error)) from None


def _write(settings: Settings, message: EmailMessage, name: str) -> None:
    folder = settings.app_dir / LOG_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}.eml"
    path.write_bytes(message.as_bytes())
    log.info("mail to %s: %s (%s)", message["To"], message["Subject"], path)
