"""The subscribers of `python -m bench.live`: SSE feeds and `graphql-transport-ws` subscriptions on
raw sockets, read by one epoll loop per process.

A load generator must cost little beside the server it measures: on a 2-core machine every
millisecond the subscribers spend is one the server does not get. So each socket's bytes are read
as they arrive and searched whole for the events complete so far (one clock reading per read: what
arrived together arrived at the same time), with no event loop, task or WebSocket library in
between. The protocols themselves are checked by the tests, with `gql`, `websockets` and httpx.
"""
import base64
import json
import os
import re
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

HOST = "127.0.0.1"
# Searched for in the bytes as they arrive: a pattern that starts with a literal is found by a fast
# scan, where one anchored at line starts (`^`) is tried at every position.
SSE_ID = re.compile(rb'\ndata: \{"data":\{"id":"([0-9a-f]{24})"')
WS_ID = re.compile(rb'"postChanged":\{"id":"([0-9a-f]{24})"')
SUBSCRIPTION = "subscription { postChanged { id operation record { id title } } }"


@dataclass
class Deliveries:
    acked: dict[str, float] = field(default_factory=dict)                      # post id -> ack time
    received: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # post id -> (kind, time)

    def got(self, kind: str, post_ids: list[bytes], moment: float) -> None:
        for post_id in post_ids:
            self.received.setdefault(post_id.decode(), []).append((kind, moment))


def _connect(port: int, request: bytes, expect: bytes) -> tuple[socket.socket, bytes]:
    """A socket that sent `request` and got a response whose status line holds `expect`, and the bytes
    that came after the response's head."""
    sock = socket.create_connection((HOST, port))
    sock.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(1 << 16)
        if not data:
            raise RuntimeError(f"the server closed a subscriber's connection: {head[:200]!r}")
        head += data
    head, rest = head.split(b"\r\n\r\n", 1)
    if expect not in head.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"subscription refused: {head[:200]!r}")
    return sock, rest


class _Sse:
    kind = "sse"

    def __init__(self, port: int, token: str) -> None:
        self.sock, self.unread = _connect(port, (
            f"GET /api/restify/posts/events HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {token}\r\n"
            "Accept: text/event-stream\r\n\r\n").encode(), b" 200 ")

    def take(self, data: bytes) -> list[bytes]:
        """The post ids of the events complete so far, up to the last blank line; the rest waits."""
        unread = self.unread + data
        end = unread.rfind(b"\n\n")
        if end < 0:
            self.unread = unread
            return []
        self.unread = unread[end:]
        return SSE_ID.findall(unread, 0, end)


class _GraphQL:
    kind = "graphql"

    def __init__(self, port: int, token: str) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock, self.unread = _connect(port, (
            f"GET /graphql HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").encode(), b" 101 ")
        self.sock.sendall(_client_frame({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}))
        while not any(b'"connection_ack"' in payload for payload in self._payloads(self.sock.recv(1 << 16))):
            pass
        self.sock.sendall(_client_frame({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIPTION}}))

    def _payloads(self, data: bytes) -> list[bytes]:
        if not data:
            raise RuntimeError("the server closed a GraphQL subscriber's connection")
        payloads, self.unread = _server_frames(self.unread + data)
        for payload in payloads:
            if b'"type":"error"' in payload or b'"type":"complete"' in payload or b'"connection_error"' in payload:
                raise RuntimeError(f"GraphQL subscription refused: {payload[:200]!r}")
        return payloads

    def take(self, data: bytes) -> list[bytes]:
        return [found.group(1) for found in map(WS_ID.search, self._payloads(data)) if found]


def _client_frame(message: dict) -> bytes:
    """A masked WebSocket text frame (a client's frames are masked), for the few a subscriber sends."""
    data, mask = json.dumps(message).encode(), os.urandom(4)
    size = len(data)
    head = bytes([0x81, 0x80 | size]) if size < 126 else bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def _server_frames(data: bytes) -> tuple[list[bytes], bytes]:
    """The payloads of the complete (unmasked, unfragmented) frames at the start of `data`, and the rest."""
    payloads, at = [], 0
    while len(data) - at >= 2:
        size, start = data[at + 1] & 0x7F, at + 2
        if size == 126:
            size, start = int.from_bytes(data[at + 2:at + 4], "big"), at + 4
        elif size == 127:
            size, start = int.from_bytes(data[at + 2:at + 10], "big"), at + 10
        if len(data) < start + size:
            break
        payloads.append(data[start:start + size])
        at = start + size
    return payloads, data[at:]


def listen(port: int, sse_tokens: list[str], graphql_tokens: list[str], conn: Connection) -> None:
    """One subscribers' process: a subscriber per token given, then every socket read as it arrives
    until told to stop; answers the main process's questions about what arrived."""
    deliveries = Deliveries()
    subscribers: list[_Sse | _GraphQL] = [_Sse(port, token) for token in sse_tokens]
    subscribers += [_GraphQL(port, token) for token in graphql_tokens]
    poller = select.epoll()
    by_fd = {}
    for subscriber in subscribers:
        subscriber.sock.setblocking(False)
        by_fd[subscriber.sock.fileno()] = subscriber
        poller.register(subscriber.sock.fileno(), select.EPOLLIN)
    poller.register(conn.fileno(), select.EPOLLIN)
    conn.send("connected")
    answers: dict[str, Callable[[object], object]] = {
        "count": lambda post_id: len(deliveries.received.get(str(post_id), [])),  # deliveries of one post
        "total": lambda _: sum(len(v) for v in deliveries.received.values()),
        "clear": lambda _: deliveries.received.clear() or True,
        "report": lambda _: deliveries.received,
    }
    while True:
        for fd, _ in poller.poll():
            subscriber = by_fd.get(fd)
            if subscriber is None:  # the main process asks
                command, argument = conn.recv()
                if command not in answers:
                    return
                conn.send(answers[command](argument))
                continue
            try:
                data = subscriber.sock.recv(1 << 16)
            except BlockingIOError:
                continue
            if not data:
                raise RuntimeError(f"the server closed a {subscriber.kind} subscriber's connection")
            found = subscriber.take(data)
            if found:
                deliveries.got(subscriber.kind, found, time.monotonic())
