"""A real HTTP receiver for webhook deliveries (tornado, in a thread of its own): it answers each POST as
its script says (`refuse`: 500, `hang`: no answer until it stops, `accept`: 204), then as `then` says,
and keeps every request it got."""
import asyncio
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler

from storage.embedded import free_port


@dataclass(frozen=True)
class Received:
    outcome: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def signed_with(self, secret: str) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, self.headers["X-Restify-Signature"])


class _Hook(RequestHandler):
    def initialize(self, receiver: "Receiver") -> None:
        self.receiver = receiver

    async def post(self) -> None:
        outcome = self.receiver.next_outcome()
        self.receiver.keep(Received(outcome, dict(self.request.headers), self.request.body))
        if outcome == "hang":
            await self.receiver.stopping.wait()
        self.set_status(500 if outcome == "refuse" else 204)


class Receiver:
    def __init__(self, script: tuple[str, ...] = (), then: str = "accept") -> None:
        self.script, self.then = list(script), then
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.requests: list[Received] = []
        self._changed = threading.Condition()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "Receiver":
        self._thread.start()
        self._ready.wait(10)
        return self

    def _run(self) -> None:
        async def serve() -> None:
            self.stopping = asyncio.Event()
            server = HTTPServer(Application([("/hook", _Hook, {"receiver": self})]))
            server.listen(self.port, "127.0.0.1")
            self._ready.set()
            await self.stopping.wait()
            server.stop()
        loop = asyncio.new_event_loop()
        self._loop = loop
        loop.run_until_complete(serve())
        loop.close()

    def next_outcome(self) -> str:
        with self._changed:
            return self.script.pop(0) if self.script else self.then

    def keep(self, received: Received) -> None:
        with self._changed:
            self.requests.append(received)
            self._changed.notify_all()

    def set_then(self, outcome: str) -> None:
        with self._changed:
            self.then = outcome

    def accepted(self) -> list[Received]:
        with self._changed:
            return [r for r in self.requests if r.outcome == "accept"]

    def wait_for(self, count: int, timeout: float, outcome: str | None = None) -> list[Received]:
        """Returns once `count` requests (with `outcome`, if given) arrived; fails after `timeout` seconds."""
        def arrived() -> list[Received]:
            return [r for r in self.requests if outcome is None or r.outcome == outcome]
        with self._changed:
            assert self._changed.wait_for(lambda: len(arrived()) >= count, timeout), self.requests
            return arrived()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self.stopping.set)
        self._thread.join(10)
