"""Clients that ask for a large answer and never read it: each is disconnected after
`server.write_timeout`, all of them together hold at most `server.max_pending_bytes` (past it a large
answer is a 503), and everyone else is served meanwhile. Real sockets, on the server `restify serve` runs.

A stuck answer must be larger than what the kernel takes on a client's behalf (the server's send
buffer grows to a few MiB on loopback; the client's receive buffer is kept small): 12 MiB or more.
What the server still has to send is read from the process's counter (`service.http.sending.BACKLOG`),
so no test waits on a wall-clock guess of when a write is stuck.
"""
import asyncio
import hashlib
import json
import socket
import time

import pytest

from service.core.operations.crud import now
from service.http.sending import BACKLOG, CHUNK
from service.mcp import endpoints
from tests.http.test_proxy_headers import http_server  # noqa: F401 - the server `restify serve` runs


def _send_buffer_cap() -> int:
    """The most a TCP socket's send buffer grows to here (Linux's tcp_wmem maximum)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as handle:
            return int(handle.read().split()[2])
    except (OSError, ValueError, IndexError):
        return 4 * 1024 * 1024


BODY = "slow readers pin memory " * 8_700  # about 204 KB a post
POSTS = max(60, 3 * _send_buffer_cap() // len(BODY))  # a page of all of them: 12 MiB, or thrice the kernel's share
LARGE = f"/api/restify/posts?perPage={POSTS}"
SMALL = "/api/restify/tags"  # an empty page: a few hundred bytes
BOUND = 60.0  # generous: how long a test waits for what it checks before calling it a failure
BUSY = {"message": "The server is busy sending other answers. Try again in a moment."}


@pytest.fixture
def limits():
    return {"write_timeout": 30.0}


@pytest.fixture
def config(config, limits):
    config["server"] = {"max_response_bytes": 0, **limits}  # the answers here are larger than its default
    config["mcp"] = {"max_result_bytes": 0}  # MCP results whole, posts of 200 KB included
    return config


@pytest.fixture
def posts(db, io_loop):
    stamp = {"created_at": now(), "updated_at": now()}
    documents = [{"title": f"Post {n}", "body": BODY, "views": n, "published": True, "user_id": None,
                  "cover": None, "tag_ids": [], **stamp} for n in range(POSTS)]
    io_loop.run_sync(lambda: db.collection("posts").insert_many(documents))
    assert BACKLOG.pending == 0  # nothing left over from another test
    yield
    assert BACKLOG.pending == 0, "a large answer was still counted after its test"


class NonReader:
    """A client that sends one request and never reads: a tiny receive buffer, so the kernel takes
    almost nothing of the answer for it and the server's writes stay pending."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: fixes the window
        self.sock.setblocking(False)

    async def send(self, request: bytes) -> None:
        loop = asyncio.get_running_loop()
        await loop.sock_connect(self.sock, ("127.0.0.1", self.port))
        await loop.sock_sendall(self.sock, request)

    async def read_to_end(self) -> bytes:
        """Everything the server sent, up to its close (EOF or reset); fails if it never closes."""
        loop = asyncio.get_running_loop()
        received = bytearray()
        while True:
            try:
                chunk = await asyncio.wait_for(loop.sock_recv(self.sock, 1 << 16), BOUND)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
        return bytes(received)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def non_reader(http_server, http_server_port):
    opened: list[NonReader] = []

    async def open_one(path: str = LARGE) -> NonReader:
        client = NonReader(http_server_port[1])
        opened.append(client)
        await client.send(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        return client
    yield open_one
    for client in opened:
        client.close()


async def until(condition, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"waited {BOUND:g} s for {what}"
        await asyncio.sleep(0.02)


def stuck() -> bool:
    return BACKLOG.pending > 0


def idle() -> bool:
    return BACKLOG.pending == 0


# -- (a) a client that reads nothing is disconnected ------------------------------------------------------
@pytest.mark.parametrize("limits", [{"write_timeout": 1.0}])
async def test_a_client_that_reads_nothing_is_disconnected_after_write_timeout(posts, non_reader, api, limits):
    client = await non_reader()
    await until(stuck, "the answer to be pending")
    started = time.monotonic()
    await until(idle, "the pending answer to be abandoned")
    assert time.monotonic() - started >= 0.5  # not at once: it had write_timeout to take something
    received = await client.read_to_end()  # what the kernel had taken for it, then the server's close
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    assert len(body) < length  # cut short: the rest was never sent
    assert (await api.get("/healthz")).status == 200


@pytest.mark.parametrize("limits", [{"write_timeout": 1.0}])
async def test_a_graphql_client_that_reads_nothing_is_disconnected_too(posts, http_server, http_server_port):
    query = json.dumps({"query": f"{{ postList(first: {POSTS}) {{ id title body }} }}"}).encode()
    client = NonReader(http_server_port[1])
    try:
        await client.send(b"POST /graphql HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(query), query))
        await until(stuck, "the answer to be pending")
        await until(idle, "the pending answer to be abandoned")
        received = await client.read_to_end()
        assert received.startswith(b"HTTP/1.1 200 ") and len(received) < POSTS * len(BODY)
    finally:
        client.close()


@pytest.mark.parametrize("limits", [{"write_timeout": 1.0}])
async def test_a_client_that_reads_none_of_its_small_answers_is_disconnected_too(db, http_server, http_server_port):
    """Answers under a chunk go out in one write each; pipelined requests whose answers are never read fill
    the socket, and the one the kernel no longer takes closes the connection after write_timeout."""
    post = await db.collection("posts").insert({"title": "Small", "body": "x" * (CHUNK - 4096), "views": 0,
                                                "published": True, "user_id": None, "cover": None, "tag_ids": [],
                                                "created_at": now(), "updated_at": now()})
    request = f"GET /api/restify/posts/{post['id']} HTTP/1.1\r\nHost: t\r\n\r\n".encode()
    pipelined = 3 * _send_buffer_cap() // CHUNK  # far more than the kernel takes for it
    client = NonReader(http_server_port[1])
    try:
        await client.send(request * pipelined)
        connections = http_server._connections  # Tornado's live connections: this client's is the only one
        await until(lambda: bool(connections), "the connection to be served")
        await until(lambda: not connections, "the server to close the connection")
        received = await client.read_to_end()
        answered = received.count(b"HTTP/1.1 200 OK")
        assert 0 < answered < pipelined
    finally:
        client.close()


# -- (b, c) past max_pending_bytes a large answer is a 503; everyone else is served ----------------------
@pytest.mark.parametrize("limits", [{"write_timeout": 60.0, "max_pending_bytes": 1_048_576}])
async def test_past_max_pending_bytes_a_large_answer_is_refused_and_small_ones_are_served(posts, non_reader, api,
                                                                                          limits):
    first = await non_reader()
    await until(stuck, "the first answer to be pending")
    refused = await api.get(LARGE)
    assert refused.status == 503
    assert refused.json == BUSY
    assert refused.headers["Retry-After"] == "5"
    assert stuck()  # the first one still waits: it was that one that filled the room
    health = await api.get("/healthz")
    small = await api.get(SMALL)
    assert (health.status, small.status, small.json["data"]) == (200, 200, [])
    first.close()  # gone: what it held is let go
    await until(idle, "the abandoned answer to be let go")
    assert (await api.get(LARGE)).status == 200  # and there is room again


# -- (d) a large answer read normally arrives whole ------------------------------------------------------
async def test_a_large_answer_read_normally_arrives_whole_with_its_etag(posts, http_server, api):
    response = await api.get(LARGE)
    assert response.status == 200
    assert len(response.body) > 10 * CHUNK
    assert int(response.headers["Content-Length"]) == len(response.body)
    # The ETag is Tornado's, of the whole body as encoded before it was cut into chunks.
    assert response.headers["Etag"] == f'"{hashlib.sha1(response.body).hexdigest()}"'
    records = response.json["data"]
    assert [record["attributes"]["title"] for record in records] == [f"Post {n}" for n in range(POSTS)]
    assert all(record["attributes"]["body"] == BODY for record in records)
    again = await api.get(LARGE, headers={"If-None-Match": response.headers["Etag"]})
    assert (again.status, again.body) == (304, b"")
    head = await api.request("HEAD", LARGE)
    assert (head.status, head.body, head.headers["Content-Length"]) == (200, b"", str(len(response.body)))
    assert idle()


async def test_a_small_answer_keeps_its_single_write(posts, http_server, api):
    response = await api.get(SMALL)
    assert response.status == 200 and len(response.body) < CHUNK
    assert response.headers["Etag"] == f'"{hashlib.sha1(response.body).hexdigest()}"'
    again = await api.get(SMALL, headers={"If-None-Match": response.headers["Etag"]})
    assert again.status == 304


@pytest.fixture
def mcp_endpoint(app, io_loop):
    (endpoint,) = endpoints(app)
    yield endpoint
    io_loop.run_sync(endpoint.close)


async def test_large_answers_of_the_other_doors_arrive_whole(posts, http_server, api, ann, mcp_endpoint):
    graphql = await api.post("/graphql", {"query": f"{{ postList(first: {POSTS}) {{ title body }} }}"})
    assert graphql.status == 200 and len(graphql.body) > 10 * CHUNK
    assert graphql.json["data"]["postList"] == [{"title": f"Post {n}", "body": BODY} for n in range(POSTS)]
    document = await api.get("/api/restify/openapi.json")
    assert document.status == 200 and int(document.headers["Content-Length"]) == len(document.body)
    assert json.loads(document.body)["openapi"].startswith("3.")
    cached = await api.get("/api/restify/openapi.json", headers={"If-None-Match": document.headers["Etag"]})
    assert cached.status == 304
    assert idle()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "posts-index-tool", "arguments": {"perPage": 3}}}
    mcp = await api.post("/mcp", call, token=ann["token"], headers={"Accept": "application/json, text/event-stream"})
    assert mcp.status == 200 and len(mcp.body) > CHUNK  # three posts' bodies, as text and as structured content
    assert [post["attributes"]["body"] for post in mcp.json["result"]["structuredContent"]["data"]] == [BODY] * 3
    assert idle()
