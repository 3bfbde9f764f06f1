"""A real SMTP server for the tests (aiosmtpd, in a thread of its own), and the mail it received."""
import email
import email.policy
import socket
import threading
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Inbox:
    """aiosmtpd's handler: keeps every message accepted, parsed."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.refuse: set[str] = set()  # recipients refused for good (550)
        self._arrived = threading.Condition()

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: list[str]) -> str:
        if address in self.refuse:
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        with self._arrived:
            self.messages.append(parsed)
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float) -> list[EmailMessage]:
        """The messages once `count` have arrived (a process sends them); AssertionError after `timeout`."""
        with self._arrived:
            assert self._arrived.wait_for(lambda: len(self.messages) >= count, timeout), self.messages
            return list(self.messages)


class SmtpServer:
    """Started and stopped on one port, so a service configured for it before it runs finds it later."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.inbox = Inbox()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> "SmtpServer":
        self._controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
