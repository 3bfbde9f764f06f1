"""Connections on the server `restify serve` runs: a refusal keeps a keep-alive connection usable,
and a connection cannot be held open for free (idle, header and body time limits)."""
import asyncio
import json
import time

import pytest
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

from service.http.connections import TimedHTTPServer

from tests.http.test_proxy_headers import http_server  # noqa: F401 - the server `restify serve` runs

OPENAPI = "/api/restify/openapi.json"
FOLLOW_UP = f"GET {OPENAPI} HTTP/1.1\r\nHost: t\r\n\r\n".encode()
# Small limits so a test waits a second, not a minute; each test raises the ones it does not look at.
QUICK = 1.0
LONG = 120.0
BOUND = 30.0  # generous (a busy machine can be slow to act on a limit), and well short of LONG


@pytest.fixture
def limits():
    return {"idle_timeout": LONG, "header_timeout": LONG, "body_timeout": LONG}


@pytest.fixture
def config(config, limits):
    config["server"] = {"max_body_bytes": 1024, **limits}
    return config


class Raw:
    """One client connection, spoken to byte by byte."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> "Raw":
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def response(self, head: bool = False) -> tuple[int, dict[str, str], bytes]:
        raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), BOUND)
        status_line, *lines = raw.decode("latin-1").split("\r\n")
        headers = {}
        for line in filter(None, lines):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = 0 if head else int(headers.get("content-length", 0))
        body = await asyncio.wait_for(self.reader.readexactly(length), BOUND)
        return int(status_line.split()[1]), headers, body

    async def closed_after(self) -> float:
        """Seconds until the server closes the connection (EOF or reset)."""
        start = time.monotonic()
        try:
            rest = await asyncio.wait_for(self.reader.read(), BOUND)
        except ConnectionResetError:
            rest = b""
        assert rest == b"", rest
        return time.monotonic() - start

    def close(self) -> None:
        self.writer.close()


@pytest.fixture
def raw(http_server, http_server_port):
    connections: list[Raw] = []

    async def connect() -> Raw:
        connections.append(await Raw.open(http_server_port[1]))
        return connections[-1]
    yield connect
    for connection in connections:
        connection.close()


# -- a refusal from prepare() keeps the connection ------------------------------------------------------
REFUSED = [
    pytest.param(b"GET /api/restify/posts HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer 1|nope\r\n\r\n",
                 401, {"message": "Unauthenticated."}, id="401-bad-token"),
    pytest.param(b"GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n", 404, {"message": "Not found."}, id="404"),
    pytest.param(b"GET /api/restify/posts?q=" + b"x" * 9000 + b" HTTP/1.1\r\nHost: t\r\n\r\n",
                 414, {"message": "The query string is too long."}, id="414"),
    pytest.param(b"POST /api/restify/posts HTTP/1.1\r\nHost: t\r\nAuthorization: Basic eDp5\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"title\": \"Hi!\"}\n",
                 401, {"message": "Unauthenticated."}, id="401-with-a-body"),
    pytest.param(b"PUT /nowhere HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"5\r\nhello\r\n0\r\n\r\n", 404, {"message": "Not found."}, id="404-chunked-body"),
    pytest.param(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 401, {"message": "Unauthenticated."},
                 id="401-mcp"),
]


@pytest.mark.parametrize("request_bytes, status, body", REFUSED)
async def test_a_refusal_leaves_the_keep_alive_connection_usable(raw, request_bytes, status, body):
    client = await raw()
    await client.send(request_bytes)
    answered, headers, content = await client.response()
    assert (answered, json.loads(content)) == (status, body)
    assert headers.get("connection", "").lower() != "close"
    await client.send(FOLLOW_UP)
    answered, headers, content = await client.response()
    assert answered == 200 and content.startswith(b"{")


async def test_a_body_declared_too_large_is_refused_unread_and_the_connection_closed(raw):
    """The exception: reading a body only to drop it is what the 413 avoids, so the connection ends."""
    client = await raw()
    await client.send(b"POST /api/restify/posts HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 5000\r\n\r\n")
    status, headers, _ = await client.response()
    assert (status, headers["connection"]) == (413, "close")
    assert await client.closed_after() < BOUND


async def test_a_chunked_body_past_the_limit_is_answered_at_once_and_the_rest_never_read(raw):
    # The body never ends: the answer must come as soon as it is past the limit (1,024 bytes), not when
    # the client stops sending; reading a 20 MB body to keep one connection costs the server for nothing.
    connection = await raw()
    await connection.send(b"POST /api/restify/posts HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n")
    for _ in range(3):
        await connection.send(b"200\r\n" + b" " * 512 + b"\r\n")
    status, headers, body = await connection.response()
    assert (status, json.loads(body)) == (413, {"message": "The request body is too large."})
    assert headers["connection"] == "close"
    await connection.closed_after()


async def test_a_method_the_server_does_not_know_is_a_405_that_says_the_connection_closes(raw):
    """Tornado refuses it before reading anything else, then closes the connection: a client that was
    not told so sends its next request on the closed connection and has it reset."""
    client = await raw()
    await client.send(b"TRACE /api/logout HTTP/1.1\r\nHost: t\r\n\r\n")
    status, headers, body = await client.response()
    assert (status, json.loads(body), headers["connection"]) == (405, {"message": "Method not allowed."}, "close")
    assert await client.closed_after() < BOUND


# -- time limits ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("limits", [{"idle_timeout": QUICK, "header_timeout": LONG, "body_timeout": LONG}])
async def test_an_idle_keep_alive_connection_is_closed_after_idle_timeout(raw, limits):
    client = await raw()
    await client.send(FOLLOW_UP)
    assert (await client.response())[0] == 200
    assert QUICK * 0.9 < await client.closed_after() < BOUND


@pytest.mark.parametrize("limits", [{"idle_timeout": LONG, "header_timeout": QUICK, "body_timeout": LONG}])
async def test_a_connection_that_sends_nothing_is_closed_after_header_timeout(raw, limits):
    client = await raw()
    assert QUICK * 0.9 < await client.closed_after() < BOUND


@pytest.mark.parametrize("limits", [{"idle_timeout": LONG, "header_timeout": QUICK, "body_timeout": LONG}])
async def test_a_header_sent_a_byte_at_a_time_is_cut_after_header_timeout(raw, limits):
    client = await raw()
    await client.send(FOLLOW_UP)  # a first request; the next one comes after a quiet spell, slowly
    assert (await client.response())[0] == 200
    await asyncio.sleep(QUICK * 1.5)  # quiet for longer than the header limit: idle, not cut
    started = time.monotonic()

    async def drip() -> None:
        for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"x" * 1000:
            client.writer.write(bytes([byte]))
            await asyncio.sleep(0.05)
    dripping = asyncio.ensure_future(drip())
    try:
        await client.closed_after()
    finally:
        dripping.cancel()
    assert QUICK * 0.9 < time.monotonic() - started < BOUND


@pytest.mark.parametrize("limits", [{"idle_timeout": LONG, "header_timeout": LONG, "body_timeout": QUICK}])
async def test_a_body_that_does_not_arrive_is_cut_after_body_timeout(raw, limits):
    client = await raw()
    await client.send(b"POST /api/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"email\": ")
    assert QUICK * 0.9 < await client.closed_after() < BOUND


HALF_OPEN = 200
# Long enough for the plain requests to be answered before it ends, on a busy machine too: that order
# (not a latency) shows they were served while the half-open connections were held.
HALF_OPEN_HEADER_TIMEOUT = 10.0


@pytest.mark.parametrize("limits", [{"idle_timeout": LONG, "header_timeout": HALF_OPEN_HEADER_TIMEOUT,
                                     "body_timeout": LONG}])
async def test_half_open_connections_are_released_and_plain_requests_are_served_meanwhile(raw, api, limits):
    held = [await raw() for _ in range(HALF_OPEN)]
    for client in held[::2]:
        await client.send(b"GET / HTTP/1.1\r\n")  # half a header; the other half send nothing
    for _ in range(5):
        assert (await api.get(OPENAPI)).status == 200
    released = [client for client in held if client.reader.at_eof()]
    assert not released, f"{len(released)} connections were released before the requests were answered"
    closing = await asyncio.gather(*(client.closed_after() for client in held))
    assert max(closing) < BOUND  # the server closed every one of them (EOF): their descriptors are free


class _Slow(RequestHandler):
    async def post(self) -> None:
        await asyncio.sleep(QUICK * 2.5)  # past the body limit and two sweeps
        self.write({"read": len(self.request.body)})


async def test_a_request_handled_for_longer_than_the_body_limit_is_answered():
    """The body clock ends with the body: a slow answer (a long bulk write) is not cut by it."""
    [listening] = bind_sockets(0, "127.0.0.1")
    server = TimedHTTPServer(Application([("/slow", _Slow)]), idle_timeout=LONG, header_timeout=LONG,
                             body_timeout=QUICK)
    server.add_socket(listening)
    client = await Raw.open(listening.getsockname()[1])
    try:
        await client.send(b"POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        status, _, body = await client.response()
        assert (status, json.loads(body)) == (200, {"read": 5})
    finally:
        client.close()
        server.stop()
