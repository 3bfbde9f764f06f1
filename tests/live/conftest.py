"""Live feeds through real clients: httpx-sse for server-sent events, gql for GraphQL over WebSocket."""
import asyncio
from contextlib import AsyncExitStack

import httpx
import pytest
from httpx_sse import aconnect_sse

PREFIX = "/api/restify"
# Seconds to wait for an event before failing: it bounds a hang, so it leaves room for a busy machine.
WAIT = 60.0


@pytest.fixture
def config(config, request):
    """Live settings for tests: a short poll; parametrize `config` indirectly to change them."""
    config["live"] = {"heartbeat_seconds": 30, "idle_ms": 20, **getattr(request, "param", {})}
    return config


@pytest.fixture
def published_or_own(registry):
    """Posts: anyone sees published ones, a user also their own drafts."""
    policy = registry.policies.for_model(registry.get("posts").model)
    policy.show = lambda user, record: bool(record.published) or (user is not None and record.user_id == user.id)
    yield
    del policy.show


@pytest.fixture
def base_url(app, http_server, http_server_port):
    return f"http://127.0.0.1:{http_server_port[1]}"


@pytest.fixture
def client(base_url, io_loop):
    session = httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(WAIT))
    yield session
    io_loop.run_sync(session.aclose)


class Feed:
    """One SSE connection, kept open across a test's steps."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self._stack = AsyncExitStack()

    async def open(self, path: str, token: str | None = None, headers: dict | None = None) -> "Feed":
        sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
        self.source = await self._stack.enter_async_context(aconnect_sse(self.client, "GET", path, headers=sent))
        self.response = self.source.response
        if self.response.status_code == 200:
            self._events = self.source.aiter_sse()
        return self

    async def next(self):
        """The next event (comments are not events); fails the test after WAIT seconds."""
        return await asyncio.wait_for(self._events.__anext__(), WAIT)

    async def body(self) -> dict:
        await self.response.aread()
        return self.response.json()

    async def close(self) -> None:
        await self._stack.aclose()


@pytest.fixture
def feeds(client, io_loop):
    """`await feeds(path, token=...)` opens a feed; every feed is closed after the test."""
    opened: list[Feed] = []

    async def open_feed(path: str, token: str | None = None, headers: dict | None = None) -> Feed:
        feed = await Feed(client).open(path, token, headers)
        opened.append(feed)
        return feed

    yield open_feed

    async def close_all() -> None:
        for feed in opened:
            await feed.close()
    io_loop.run_sync(close_all)
