"""An HTTP server whose connections cannot be held open for free.

Tornado has one clock for the wait before a request (`idle_connection_timeout`, which runs
until the whole header has arrived) and one for its body (`body_timeout`). A client that sends
its header a byte at a time would hold a connection for the whole idle time, so the wait is
split: a kept-alive connection may stay quiet for `idle` seconds, but once a request's first
byte is in (or from the accept, on a new connection) its header must be complete within
`header` seconds. The body clock is Tornado's own.
"""
from typing import Any

from tornado import httputil
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop
from tornado.iostream import IOStream


class _RequestClock:
    """Closes one connection when the next request's header does not come in time."""

    def __init__(self, stream: IOStream, idle: float, header: float) -> None:
        self.stream, self.idle, self.header = stream, idle, header
        self._timer: object | None = None
        self._requests = 0
        self._quiet = False  # waiting for the first byte of a kept-alive connection's next request
        read = stream.read_from_fd

        def read_from_fd(buf: bytearray | memoryview) -> int | None:
            count = read(buf)
            if count and self._quiet:
                self._quiet = False
                self._arm(self.header)
            return count
        stream.read_from_fd = read_from_fd  # type: ignore[method-assign]  # the one hook on bytes arriving
        self._arm(header)

    def next_request(self) -> None:
        """A new request is awaited: on a kept-alive connection, it may first be quiet for a while."""
        self._requests += 1
        if self._requests > 1:
            self._quiet = True
            self._arm(self.idle)

    def header_received(self) -> None:
        self._quiet = False
        self.stop()

    def stop(self) -> None:
        if self._timer is not None:
            IOLoop.current().remove_timeout(self._timer)
            self._timer = None

    def _arm(self, seconds: float) -> None:
        self.stop()
        self._timer = IOLoop.current().call_later(seconds, self.stream.close)


class _Timed(httputil.HTTPMessageDelegate):
    """Passes a request through, stopping its connection's clock when the header is in."""

    def __init__(self, delegate: httputil.HTTPMessageDelegate, clock: _RequestClock) -> None:
        self.delegate, self.clock = delegate, clock

    def headers_received(self, start_line: Any, headers: httputil.HTTPHeaders) -> Any:
        self.clock.header_received()
        return self.delegate.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self.delegate.data_received(chunk)

    def finish(self) -> None:
        self.delegate.finish()

    def on_connection_close(self) -> None:
        self.delegate.on_connection_close()


class TimedHTTPServer(HTTPServer):
    """`HTTPServer` with separate idle, header and body time limits (seconds)."""

    # The override takes idle_timeout and header_timeout in place of Tornado's idle_connection_timeout.
    def initialize(self, request_callback: Any, *, idle_timeout: float = 60.0,  # type: ignore[override]
                   header_timeout: float = 10.0, body_timeout: float = 60.0, **kwargs: Any) -> None:
        # Tornado's own wait (until the header is complete) stays as a backstop: the longest a legal
        # request can take to arrive.
        super().initialize(request_callback, idle_connection_timeout=idle_timeout + header_timeout,
                           body_timeout=body_timeout, **kwargs)
        self.idle_timeout, self.header_timeout = idle_timeout, header_timeout
        self._clocks: dict[IOStream, _RequestClock] = {}

    def handle_stream(self, stream: IOStream, address: tuple) -> None:
        self._clocks[stream] = _RequestClock(stream, self.idle_timeout, self.header_timeout)
        super().handle_stream(stream, address)

    def start_request(self, server_conn: object, request_conn: httputil.HTTPConnection) -> httputil.HTTPMessageDelegate:
        delegate = super().start_request(server_conn, request_conn)
        clock = self._clocks.get(getattr(server_conn, "stream", None))  # type: ignore[arg-type]
        if clock is None:
            return delegate
        clock.next_request()
        return _Timed(delegate, clock)

    def on_close(self, server_conn: object) -> None:
        clock = self._clocks.pop(getattr(server_conn, "stream", None), None)  # type: ignore[arg-type]
        if clock is not None:
            clock.stop()
        super().on_close(server_conn)
