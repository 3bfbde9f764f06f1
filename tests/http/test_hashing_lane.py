"""Password hashing has its own lane (DESIGN §9 "Slow work has its own lanes"): a burst of logins
at the real argon2 cost neither delays file downloads nor queues without bound."""
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
BOUND = 0.5  # seconds; a download takes a few milliseconds when nothing is in its way


async def lane_holds(restify, at_least: int, deadline: float = 30.0) -> None:
    """Waits until `at_least` password checks are running or queued in the hashing lane."""
    give_up = time.monotonic() + deadline
    while restify.passwords.in_lane < at_least:
        assert time.monotonic() < give_up, f"the lane never held {at_least} (now {restify.passwords.in_lane})"
        await asyncio.sleep(0.002)


@pytest.fixture
def wide(api):
    """A client that sends up to 100 requests at once (Tornado's default client sends 10)."""
    client = AsyncHTTPClient(force_instance=True, max_clients=100)
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
        config["auth"].update({**REAL_COST, **UNLIMITED})
        return config

    async def test_file_downloads_answer_in_time_while_60_logins_hash(self, api, wide, restify):
        await restify.disk().put(FILE, png())
        burst = logins(wide, 60)
        await lane_holds(restify, 30)
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            response = await api.get(f"/storage/{FILE}")
            timings.append(time.perf_counter() - started)
            assert (response.status, response.body) == (200, png())
        assert restify.passwords.in_lane > 2, "the burst ended before the downloads: they proved nothing"
        assert max(timings) < BOUND, [f"{t * 1000:.0f} ms" for t in timings]
        assert [r.status for r in await asyncio.gather(*burst)] == [401] * 60


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
