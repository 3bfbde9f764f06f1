"""One GraphQL subscription on a WebSocket: its events as `next` messages, each made once.

An event's result for a selection is made once (service/graphql/shared_events.py); so is its
message for an operation id, as a WebSocket frame (frames from a server are not masked, so the
same bytes go to every socket). While the socket takes what it is given, the feed's own loop over
its subscribers writes each frame (`write_now`); a socket that is backed up gets its events queued,
bounded, and the operation's task sends them, waiting for each (`run`).
"""
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from graphql import ExecutionResult, execute_subscription_event
from tornado.iostream import IOStream

from service.core.live.events import Batch, Event
from service.core.live.subscription import Subscription
from service.graphql.executor import result_body
from service.graphql.shared_events import SharedEventExecutor, SharedResult
from service.graphql.subscriptions import payload_of
from service.http.base import encode_json
from service.http.sending import send_now

_TEXT = 0x81   # FIN and the text opcode


def text_frame(data: bytes) -> bytes:
    """An unmasked, uncompressed WebSocket text frame (RFC 6455 section 5.2)."""
    size = len(data)
    if size < 126:
        return struct.pack("!BB", _TEXT, size) + data
    if size <= 0xFFFF:
        return struct.pack("!BBH", _TEXT, 126, size) + data
    return struct.pack("!BBQ", _TEXT, 127, size) + data


def encoded(result: ExecutionResult) -> bytes:
    """The result's JSON (`{"data": ...}`), made once for a result subscribers share."""
    if not isinstance(result, SharedResult):
        return encode_json(result_body(result))
    if result.encoded is None:
        result.encoded = encode_json(result_body(result))
    return result.encoded


class LiveOperation:
    """The events of one `subscribe` message, for one socket."""

    def __init__(self, executor: SharedEventExecutor, subscription: Subscription, id: str, framed: bool) -> None:
        """`framed`: messages are sent as frames made here (the socket compresses nothing)."""
        self.executor, self.subscription, self._framed = executor, subscription, framed
        self._selection = executor.selection()
        self._head = b'{"id":' + encode_json(id) + b',"type":"next","payload":'
        self._sending = False   # the task is sending events it took: later ones queue behind them

    def result(self, event: Event) -> Any:
        """The event's result for this selection (an awaitable while it is still being made)."""
        payload = payload_of(event)
        if self._selection not in payload.results:
            execute_subscription_event(self.executor.build_per_event_executor(payload))  # keeps it there
        return payload.results[self._selection]

    def message(self, event: Event, result: ExecutionResult) -> bytes:
        """The `next` message of a made result (framed, if so), made once per event and operation id."""
        results = payload_of(event).results
        key = (self._selection, self._head, self._framed)
        if key not in results:
            message = self._head + encoded(result) + b"}"
            results[key] = text_frame(message) if self._framed else message
        made: bytes = results[key]
        return made

    def attach(self, stream: IOStream) -> None:
        """From now on, events go straight to `stream` while it takes them (framed messages only)."""
        assert self._framed
        def write_now(events: list[Event]) -> bool:
            if self._sending or stream.writing():
                return False
            if isinstance(events, Batch):   # given to several subscribers: its bytes are made once
                messages = events.made(("graphql", self._selection, self._head), lambda: self._messages(events))
            else:
                messages = self._messages(events)
            return messages is not None and send_now(stream, messages)
        self.subscription.attach(write_now)

    def _messages(self, events: list[Event]) -> bytes | None:
        """The events' framed messages, or None while a result is still being made (the task waits for it)."""
        results = [self.result(event) for event in events]
        if not all(isinstance(result, SharedResult) for result in results):
            return None
        return b"".join(self.message(e, r) for e, r in zip(events, results, strict=True))

    async def run(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        """Sends what was queued, in order, waiting for the socket each time (`send` takes a message as
        `message` makes it); returns only by an exception (the feed ended, or the task was cancelled)."""
        while True:
            events = await self.subscription.next_batch()
            self._sending = True
            try:
                for event in events:
                    result = self.result(event)
                    if not isinstance(result, SharedResult):
                        result = await result
                    await send(self.message(event, result))
            finally:
                self._sending = False
