"""Who a token is, remembered per process: a known token costs no read, a bounded cache still
answers for everyone, and this process's own revocations, password changes and deletions are
refused at once. Only a process that follows the change streams remembers (as `restify serve` does)."""
import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from service.config import Settings
from service.core.declarations import Restify
from service.core.identity import TOKENS, create_token, identities
from service.core.identity.known import FOLLOW_REST_SECONDS
from service.core.operations import auth
from storage import EmbeddedServer, connect
from tests.conftest import ROOT
from tests.servers import PROFILE as STORAGE_PROFILE

PREFIX = "/api/restify"
PROFILE = f"{PREFIX}/profile"


@asynccontextmanager
async def following(restify) -> AsyncIterator[None]:
    """This process follows the tokens and users change streams while the block runs."""
    stop = asyncio.Event()
    task = asyncio.ensure_future(auth.follow_identities(restify, stop))
    try:
        await asyncio.wait_for(identities(restify).watched.wait(), 30)
        yield
    finally:
        stop.set()
        await task


def _identity_reads(commands, users: str = "users") -> list[tuple[str, str]]:
    return [c for c in commands.reads() if c[1] in (TOKENS, users)]


async def test_a_known_token_reads_neither_the_token_nor_the_user(api, commands, restify):
    async with following(restify):
        ann = await api.register("Ann")
        assert (await api.get(PROFILE, token=ann["token"])).status == 200
        commands.reset()
        response = await api.get(PROFILE, token=ann["token"])
        assert (response.status, response.json["id"]) == (200, ann["id"])
        assert _identity_reads(commands) == []


async def test_following_alone_reads_the_streams_at_a_slower_pace_than_live_feeds(restify):
    """An idle process that only follows identities polls the embedded server four times a second per
    collection, not twenty: the pause is a quarter of the second a change elsewhere may take."""
    async with following(restify):
        tokens = restify.watcher(TOKENS)
        users = restify.watcher(restify.settings.get("auth", "user_repository"))
        assert (tokens.rest_seconds, users.rest_seconds) == (FOLLOW_REST_SECONDS, FOLLOW_REST_SECONDS)
        assert FOLLOW_REST_SECONDS <= 0.25 and tokens.idle_seconds < FOLLOW_REST_SECONDS


class TestAtItsBound:
    @pytest.fixture
    def config(self, config):
        config["auth"]["identity_cache_size"] = 2
        return config

    async def test_every_token_is_answered_as_its_own_user(self, api, restify):
        async with following(restify):
            users = [await api.register(name) for name in ("Ann", "Bob", "Cid", "Dee")]
            for _ in range(3):
                for user in users + users[::-1]:
                    response = await api.get(PROFILE, token=user["token"])
                    assert (response.status, response.json["id"]) == (200, user["id"])
            assert len(identities(restify)) == 2


async def test_a_logout_on_this_process_is_refused_at_once(api, restify):
    async with following(restify):
        ann = await api.register("Ann")
        assert (await api.get(PROFILE, token=ann["token"])).status == 200
        assert (await api.post("/api/logout", token=ann["token"])).status == 204
        assert (await api.get(PROFILE, token=ann["token"])).status == 401


async def test_a_profile_change_on_this_process_is_seen_at_once(api, restify):
    async with following(restify):
        ann = await api.register("Ann")
        assert (await api.get(PROFILE, token=ann["token"])).json["attributes"]["name"] == "Ann"
        changed = await api.put(PROFILE, {"name": "Anne", "email": ann["email"]}, token=ann["token"])
        assert changed.status == 200, changed.body
        assert (await api.get(PROFILE, token=ann["token"])).json["attributes"]["name"] == "Anne"


async def test_a_deleted_user_on_this_process_is_refused_at_once(api, restify):
    async with following(restify):
        ann = await api.register("Ann")
        assert (await api.get(PROFILE, token=ann["token"])).status == 200
        assert (await api.delete(f"{PREFIX}/users/{ann['id']}", token=ann["token"])).status == 204
        assert (await api.get(PROFILE, token=ann["token"])).status == 401


@pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="stops a database server of its own")
async def test_a_failing_change_stream_makes_the_process_forget_who_tokens_are(tmp_path, config, registry):
    # A stream that fails may come back past changes it never delivered (a revocation): what the process
    # remembers is then no longer trusted.
    server = EmbeddedServer(tmp_path / "db").start()
    # Long enough for the writes before the stop on a busy machine (300 ms ran out there), short enough
    # for the stream to give up soon after the server goes.
    database = connect(server.uri, "identities", profile=STORAGE_PROFILE, timeout_ms=2000)
    app = Restify(Settings(config, app_dir=ROOT), registry, database)
    stop = asyncio.Event()
    task = asyncio.ensure_future(auth.follow_identities(app, stop))
    remembered = identities(app)
    try:
        await asyncio.wait_for(remembered.watched.wait(), 30)
        user = await database.collection("users").insert({"name": "Ann", "email": "ann@example.com"})
        token = await create_token(app, user["id"])
        assert (await auth.authenticate(app, token)).id == user["id"]
        assert len(remembered) == 1 and all(stream.sound for stream in remembered.streams)
        server.stop()
        deadline = time.monotonic() + 30
        while len(remembered):
            assert time.monotonic() < deadline, "the identity was still remembered 30 s after the database went away"
            await asyncio.sleep(0.02)
        assert not all(stream.sound for stream in remembered.streams)
    finally:
        stop.set()
        await task
        database.close()
        server.stop()
