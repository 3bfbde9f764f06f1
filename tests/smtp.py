"""A real SMTP server for the tests (aiosmtpd, in a thread of its own), and the mail it received."""
import email
import email.policy
import socket
import threading
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


def reserved_socket(port: int = 0) -> socket.socket:
    """A socket bound to a port and not listening: connections are refused, and no other socket takes the port."""
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(("127.0.0.1", port))
    return held


class _OnSocket(Controller):
    """aiosmtpd's controller serving on a socket bound beforehand, not on a port it binds when started."""

    def __init__(self, handler: Any, held: socket.socket) -> None:
        host, port = held.getsockname()
        super().__init__(handler, hostname=host, port=port)
        self._held = held

    def _create_server(self) -> Any:
        return self.loop.create_server(self._factory_invoker, sock=self._held)


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
    """Started and stopped on one port, so a service configured for it before it runs finds it later.

    The port stays bound from construction on (refusing connections until `start`), so nothing else running
    beside the tests can take it in between.
    """

    def __init__(self) -> None:
        self._held: socket.socket | None = reserved_socket()
        self.port = int(self._held.getsockname()[1])
        self.inbox = Inbox()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> "SmtpServer":
        held, self._held = self._held or reserved_socket(self.port), None
        self._controller = _OnSocket(self.inbox, held)
        self._controller.start()
        return self

    def stop(self) -> None:
        """Stops serving; the port is let go (the server closes the socket it served on)."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
        if self._held is not None:
            self._held.close()
            self._held = None
