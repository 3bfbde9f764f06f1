"""An HTTP server whose connections cannot be held open for free.

A kept-alive connection may stay quiet for `idle` seconds between requests; once a request's first
byte is in (or from the accept, on a new connection) its header must be complete within `header`
seconds, and a body must arrive within `body` seconds of its header. A client that sends its header
a byte at a time therefore cannot hold a connection for the whole idle time.

Each connection keeps one deadline, which a request moves by assigning a number; one sweep per server
closes the connections past theirs. Timers per request (Tornado's header and body clocks and ours
armed and cancelled two to four per request, each with its futures and event-loop turns) were a
tenth of a plain request's CPU. The price is precision: a connection is closed at its deadline or up to one
sweep later (a quarter of the shortest limit, at most a second).
"""
import time
from typing import Any

from tornado import httputil
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop
from tornado.iostream import IOStream

MAX_SWEEP_SECONDS = 1.0


class _RequestClock:
    """The deadline of one connection: None while a request is being handled (or its answer written)."""

    __slots__ = ("stream", "idle", "header", "body", "deadline", "_requests", "_quiet")

    def __init__(self, stream: IOStream, idle: float, header: float, body: float) -> None:
        self.stream, self.idle, self.header, self.body = stream, idle, header, body
        self._requests = 0
        self._quiet = False  # waiting for the first byte of a kept-alive connection's next request
        self.deadline: float | None = time.monotonic() + header
        read = stream.read_from_fd

        def read_from_fd(buf: bytearray | memoryview) -> int | None:
            count = read(buf)
            if count and self._quiet:
                self._quiet = False
                self.deadline = time.monotonic() + self.header
            return count
        stream.read_from_fd = read_from_fd  # type: ignore[method-assign]  # the one hook on bytes arriving

    def next_request(self) -> None:
        """A new request is awaited: on a kept-alive connection, it may first be quiet for a while."""
        self._requests += 1
        if self._requests > 1:
            self._quiet = True
            self.deadline = time.monotonic() + self.idle

    def header_received(self, headers: httputil.HTTPHeaders) -> None:
        """The body clock starts for a request that has one; a request without is handled unbounded."""
        self._quiet = False
        with_body = "Transfer-Encoding" in headers or headers.get("Content-Length", "0") not in ("0", "")
        self.deadline = time.monotonic() + self.body if with_body else None

    def body_received(self) -> None:
        self.deadline = None


class _Timed(httputil.HTTPMessageDelegate):
    """Passes a request through, moving its connection's deadline as the header and the body come in."""

    def __init__(self, delegate: httputil.HTTPMessageDelegate, clock: _RequestClock) -> None:
        self.delegate, self.clock = delegate, clock

    def headers_received(self, start_line: Any, headers: httputil.HTTPHeaders) -> Any:
        self.clock.header_received(headers)
        return self.delegate.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self.delegate.data_received(chunk)

    def finish(self) -> None:
        self.clock.body_received()
        self.delegate.finish()

    def on_connection_close(self) -> None:
        self.delegate.on_connection_close()


class TimedHTTPServer(HTTPServer):
    """`HTTPServer` with separate idle, header and body time limits (seconds)."""

    # The override takes idle_timeout and header_timeout in place of Tornado's idle_connection_timeout.
    def initialize(self, request_callback: Any, *, idle_timeout: float = 60.0,  # type: ignore[override]
                   header_timeout: float = 10.0, body_timeout: float = 60.0, **kwargs: Any) -> None:
        super().initialize(request_callback, **kwargs)
        # Tornado's own clocks stay off (it would wait an hour for a header by default): the sweep keeps time.
        self.conn_params.header_timeout = None
        self.idle_timeout, self.header_timeout, self.body_timeout = idle_timeout, header_timeout, body_timeout
        self.sweep_seconds = min(MAX_SWEEP_SECONDS, idle_timeout / 4, header_timeout / 4, body_timeout / 4)
        self._clocks: dict[IOStream, _RequestClock] = {}
        self._sweeping = False

    def handle_stream(self, stream: IOStream, address: tuple) -> None:
        self._clocks[stream] = _RequestClock(stream, self.idle_timeout, self.header_timeout, self.body_timeout)
        if not self._sweeping:
            self._sweeping = True
            IOLoop.current().call_later(self.sweep_seconds, self._sweep)
        super().handle_stream(stream, address)

    def _sweep(self) -> None:
        """Closes the connections past their deadline; runs while the server has connections."""
        now = time.monotonic()
        for clock in [c for c in self._clocks.values() if c.deadline is not None and c.deadline <= now]:
            clock.stream.close()
        self._sweeping = bool(self._clocks)
        if self._sweeping:
            IOLoop.current().call_later(self.sweep_seconds, self._sweep)

    def start_request(self, server_conn: object, request_conn: httputil.HTTPConnection) -> httputil.HTTPMessageDelegate:
        delegate = super().start_request(server_conn, request_conn)
        clock = self._clocks.get(getattr(server_conn, "stream", None))  # type: ignore[arg-type]
        if clock is None:
            return delegate
        clock.next_request()
        return _Timed(delegate, clock)

    def on_close(self, server_conn: object) -> None:
        self._clocks.pop(getattr(server_conn, "stream", None), None)  # type: ignore[arg-type]
        super().on_close(server_conn)
