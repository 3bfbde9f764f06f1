"""Password hashing has its own lane: a burst of logins
at the real argon2 cost neither delays file downloads nor queues without bound.

Nothing here is timed: a download proves it was not queued behind the hashes by answering before
the password checks ahead of it are done, which holds however slow the machine is. How fast a
download answers meanwhile is a figure for `bench/`."""
import asyncio
import time

import pytest
from tornado.httpclient import AsyncHTTPClient

from storage import Filter
from tests.conftest import Api
from tests.images import png

REAL_COST = {"argon2_time_cost": 3, "argon2_memory_kib": 65536}  # the defaults, not the tests' cheap ones
UNLIMITED = {"login_attempts_per_account": 0, "login_attempts_per_address": 0}
FILE = "avatars/probe.png"
# Seconds a login of a burst may wait for its answer: 60 hashes at the real cost, two at a time, take
# about 8 s on two idle cores and a minute or two when other processes hold most of the CPU.
BURST_WAIT = 600.0


async def lane_holds(restify, at_least: int, deadline: float = BURST_WAIT) -> None:
    """Waits until `at_least` password checks are running or queued in the hashing lane."""
    give_up = time.monotonic() + deadline
    while restify.passwords.in_lane < at_least:
        assert time.monotonic() < give_up, f"the lane never held {at_least} (now {restify.passwords.in_lane})"
        await asyncio.sleep(0.002)


@pytest.fixture
def wide(api):
    """A client that sends up to 100 requests at once (Tornado's default client sends 10)."""
    client = AsyncHTTPClient(force_instance=True, max_clients=100,
                             defaults={"request_timeout": BURST_WAIT, "connect_timeout": BURST_WAIT})
    yield Api(Wide(client, api.client.get_url("")))
    client.close()


class Wide:
    def __init__(self, client: AsyncHTTPClient, base: str) -> None:
        self.client, self.base = client, base.rstrip("/")

    def fetch(self, path: str, **options):
        return self.client.fetch(self.base + path, **options)


def logins(api, count: int, email=lambda n: f"nobody{n}@example.com") -> list[asyncio.Future]:
    return [asyncio.ensure_future(api.post("/api/login", {"email": email(n), "password": "wrong-password"}))
            for n in range(count)]


class TestRealCost:
    @pytest.fixture
    def config(self, config):
        config["auth"].update({**REAL_COST, **UNLIMITED, "hash_threads": 2})
        return config

    async def test_file_downloads_answer_before_the_password_checks_queued_ahead_of_them(self, api, wide, restify):
        await restify.disk().put(FILE, png())
        checked = checks_done(restify)
        burst = logins(wide, 60)
        await lane_holds(restify, 30)
        for _ in range(5):
            ahead, done_before = restify.passwords.in_lane, len(checked)
            assert ahead > 2, "the burst ended before the downloads: they proved nothing"
            response = await api.get(f"/storage/{FILE}")
            assert (response.status, response.body) == (200, png())
            # Queued behind the lane, the download would wait until all but the last check ahead of it
            # were done; in a lane of its own it answers while most of them still wait.
            done_meanwhile = len(checked) - done_before
            assert done_meanwhile < ahead // 2, f"{done_meanwhile} of {ahead} checks were done first"
        assert [r.status for r in await asyncio.gather(*burst)] == [401] * 60


def checks_done(restify) -> list[None]:
    """A list that grows by one as each password check of `restify` ends."""
    done: list[None] = []
    verify = restify.passwords.verify

    async def counted(*args):
        try:
            return await verify(*args)
        finally:
            done.append(None)
    restify.passwords.verify = counted
    return done


class TestTinyQueue:
    @pytest.fixture
    def config(self, config):
        config["auth"].update({**REAL_COST, "hash_threads": 1, "hash_queue": 1,
                               "login_attempts_per_account": 1000, "login_attempts_per_address": 1000})
        return config

    async def test_logins_past_the_queue_get_429_with_retry_after_and_are_not_counted(self, api, wide, db):
        user = await api.register("Ann")
        answers = await asyncio.gather(*logins(wide, 20, email=lambda n: user["email"]))
        statuses = [a.status for a in answers]
        assert set(statuses) == {401, 429} and statuses.count(401) >= 2, statuses
        for refused in (a for a in answers if a.status == 429):
            assert int(refused.headers["Retry-After"]) >= 1
            assert refused.json == {"message": "Too many logins at once. Try again in a moment."}
        # Only the attempts whose password was checked count against the account.
        counted = await db.collection("throttles").find(Filter(equals={"key": f"account:{user['email']}"}))
        assert sum(d["count"] for d in counted) == statuses.count(401)
