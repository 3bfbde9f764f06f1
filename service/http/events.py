"""Server-sent events: `GET <prefix>/<r>/events` streams a repository's changes as the
subscriber may see them (service/core/live/feeds.py decides; this only formats), and
`POST <prefix>/<r>/events/ticket` gives the single-use ticket a browser's EventSource needs."""
import re
from typing import Any

from tornado.iostream import StreamClosedError

from service.core.declarations.app import Restify
from service.core.kernel.errors import BadRequest
from service.core.live import tickets
from service.core.live.feeds import feeds
from service.core.live.events import Batch, Event
from service.core.live.subscription import FeedEnded, Subscription
from service.http.base import JsonHandler, encode_json
from service.http.sending import send_now

# Names a client might try to pass a token under; a token in a URL ends up in logs and histories.
_TOKEN_PARAMETERS = {"token", "access_token", "authorization", "bearer", "api_token"}


def frame(kind: str, body: Any, id: str | None = None) -> bytes:
    """One SSE message; JSON has no raw newlines, so `data:` is one line."""
    head = f"event: {kind}\n" + (f"id: {id}\n" if id else "")
    return head.encode() + b"data: " + encode_json(body) + b"\n\n"


def event_frame(event: Event) -> bytes:
    """The event's frame, made once for every subscriber it goes to."""
    framed: bytes = event.made("sse", lambda: frame(event.kind, event.body if event.body is not None else {},
                                                    event.token))
    return framed


def frames(events: list[Event]) -> bytes:
    """What a batch of events is on the stream (an event's frame, and a batch's given to several
    subscribers, are made once for all who get it)."""
    if len(events) == 1:
        return event_frame(events[0])
    if isinstance(events, Batch):
        made: bytes = events.made("sse", lambda: b"".join(map(event_frame, events)))
        return made
    return b"".join(map(event_frame, events))


def chunk(events: list[Event]) -> bytes:
    """The events as one chunk of a chunked response (made once for all who get the same)."""
    shared: Event | Batch | None = events[0] if len(events) == 1 else events if isinstance(events, Batch) else None
    if shared is None:
        return _chunk(frames(events))
    made: bytes = shared.made("sse-chunk", lambda: _chunk(frames(events)))
    return made


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


class EventsHandler(JsonHandler):
    subscription: Subscription | None = None
    _sending = False   # a batch taken from the queue is being written: later ones wait behind it
    _chunked = True    # the response's body is chunked (HTTP/1.1)

    async def get(self, name: str) -> None:
        await self._identify(name)
        last_event_id = self.request.headers.get("Last-Event-ID", "").strip() or None
        self.subscription = await feeds(self.app).subscribe(name, self.context(), last_event_id)
        self._stream_headers()
        heartbeat = float(self.app.settings.positive("live", "heartbeat_seconds"))
        try:
            await self._send(b": live\n\n")
            # Tornado chose how the body goes out when it wrote the header (HTTP/1.1: in chunks).
            self._chunked = self._headers.get("Transfer-Encoding") == "chunked"
            self._stream = self._connection.stream
            self.subscription.attach(self._write_now)
            while True:
                try:
                    events = await self.subscription.next_batch(heartbeat)
                except FeedEnded as ended:
                    await self._send(frame("error", {"message": ended.message, "code": ended.code}))
                    break
                self._sending = True
                try:
                    await self._send(frames(events) if events else b": keep-alive\n\n")
                finally:
                    self._sending = False
        except StreamClosedError:
            return
        finally:
            self.subscription.close()
        self.finish()

    async def head(self, name: str) -> None:  # type: ignore[override]  # its route has one argument
        """The status and headers GET would answer, at once: the same checks, but no stream is held
        (nor a subscription counted) and a ticket is not used up."""
        await self._identify(name, use_ticket=False)
        feeds(self.app).admit(name, self.context())
        self._stream_headers()
        self._etag = False
        await self.flush()  # the headers as GET sends them, without a Content-Length a stream has not
        self.finish()

    async def _identify(self, name: str, use_ticket: bool = True) -> None:
        params = self.params()
        if any(key.lower() in _TOKEN_PARAMETERS for key in params):
            raise BadRequest("Tokens are not accepted in the query string: send an Authorization header, "
                             "or a ticket from POST .../events/ticket as ?ticket=.")
        if params.get("ticket"):
            self.user = await tickets.redeem(self.app, name, params["ticket"], use=use_ticket)

    def _stream_headers(self) -> None:
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")  # proxies that buffer would hold events back

    def _write_now(self, events: list[Event]) -> bool:
        """Writes events at once, from the feed's loop, when nothing is waiting to go out before them;
        False when the connection is backed up or gone (or this handler is still sending): then they
        are queued and `get` sends them, waiting for the socket, as it does a slow reader's."""
        return not self._sending and send_now(self._stream, chunk(events) if self._chunked else frames(events))

    async def _send(self, chunk: bytes) -> None:
        # Waits for the socket: a slow reader makes the queue, not memory, grow; one that takes
        # nothing for server.write_timeout is disconnected.
        if not await self.write_chunks(chunk):
            raise StreamClosedError()

    def on_connection_close(self) -> None:
        if self.subscription is not None:
            self.subscription.close()


class TicketHandler(JsonHandler):
    async def post(self, name: str) -> None:
        await self.send_json(await tickets.issue(self.app, name, self.context()), 201)


def events_routes(app: Restify) -> list[tuple]:
    """Listed before the record routes, which would take `events` for an id."""
    prefix = app.settings.get("server", "prefix").rstrip("/")
    state = {"app": app}
    # Named by their templates, as metrics and access lines show them.
    return [
        (rf"{re.escape(prefix)}/([^/]+)/events", EventsHandler, state, f"{prefix}/{{resource}}/events"),
        (rf"{re.escape(prefix)}/([^/]+)/events/ticket", TicketHandler, state, f"{prefix}/{{resource}}/events/ticket"),
    ]
