"""Login and registration throttles: each attempt is counted (one atomic increment in MongoDB)
before the password is checked, so parallel attempts cannot pass the limit."""
import asyncio
import time

import pytest

from service.core.identity.ratelimit import REFUSAL_PAUSE
from storage import Filter

PASSWORD = "secret-pass"
UNAUTHENTICATED = {"message": "These credentials do not match our records."}


def registration(email: str) -> dict:
    return {"name": "Ann", "email": email, "password": PASSWORD, "password_confirmation": PASSWORD}


async def test_parallel_wrong_passwords_cannot_pass_the_account_limit(api, restify):
    """The default of 5 attempts per account per minute (the address limit, 20, is lifted here so the
    outcome does not hang on the order in which the parallel attempts reach the address count)."""
    restify.settings.set("auth", "login_attempts_per_address", 1000)
    user = await api.register("Ann")
    answers = await asyncio.gather(*(api.post("/api/login", {"email": user["email"], "password": f"wrong-{n}"})
                                     for n in range(40)))
    assert sorted(a.status for a in answers) == [401] * 5 + [429] * 35
    assert all(a.json == UNAUTHENTICATED for a in answers if a.status == 401)
    refused = [a for a in answers if a.status == 429]
    assert all(1 <= int(a.headers["Retry-After"]) <= 61 for a in refused)
    right = await api.post("/api/login", {"email": user["email"], "password": PASSWORD})
    assert right.status == 429  # the account is locked for the rest of the window, right password or not


async def test_attempts_under_a_blocked_key_are_refused_without_a_database_write(api, restify, commands):
    user = await api.register("Ann")
    for _ in range(6):
        await api.post("/api/login", {"email": user["email"], "password": "wrong"})
    commands.reset()
    answers = await asyncio.gather(*(api.post("/api/login", {"email": user["email"], "password": PASSWORD})
                                     for _ in range(20)))
    assert {a.status for a in answers} == {429}
    assert all(1 <= int(a.headers["Retry-After"]) <= 61 for a in answers)
    assert commands.commands == []  # counted once, then known here: not even the user is read


async def test_a_client_that_asks_again_under_a_blocked_key_gets_its_refusal_after_a_pause(api, restify):
    # It was told to come back later: a storm of such requests is slowed to one a second a connection.
    restify.settings.set("auth", "login_window_seconds", 86_400)  # no window edge between the attempts
    user = await api.register("Ann")
    for _ in range(6):
        await api.post("/api/login", {"email": user["email"], "password": "wrong"})
    started = time.perf_counter()
    answer = await api.post("/api/login", {"email": user["email"], "password": "wrong"})
    assert answer.status == 429 and answer.json["message"].startswith("Too many")
    assert time.perf_counter() - started >= REFUSAL_PAUSE * 0.95


class TestSmallLimits:
    @pytest.fixture
    def config(self, config):
        config["auth"].update({"login_attempts_per_account": 3, "login_attempts_per_address": 4,
                               "registrations_per_address": 3})
        return config

    async def test_successful_logins_take_their_own_count_back(self, api):
        user = await api.register("Ann")
        for _ in range(6):  # more than either limit: successes do not use them up
            assert (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).status == 200
        for _ in range(3):
            assert (await api.post("/api/login", {"email": user["email"], "password": "wrong"})).status == 401
        assert (await api.post("/api/login", {"email": user["email"], "password": "wrong"})).status == 429

    async def test_a_login_to_ones_own_account_does_not_reset_the_address_count(self, api):
        user = await api.register("Ann")
        for index in range(3):
            assert (await api.post("/api/login", {"email": f"x{index}@example.com", "password": "x"})).status == 401
        assert (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).status == 200
        assert (await api.post("/api/login", {"email": "x9@example.com", "password": "x"})).status == 401
        assert (await api.post("/api/login", {"email": "x10@example.com", "password": "x"})).status == 429

    async def test_registrations_are_throttled_per_address(self, api, db):
        answers = await asyncio.gather(*(api.post("/api/register", registration(f"user{n}@example.com"))
                                         for n in range(8)))
        assert sorted(a.status for a in answers) == [201] * 3 + [429] * 5
        refused = next(a for a in answers if a.status == 429)
        retry = int(refused.headers["Retry-After"])
        assert 1 <= retry <= 3601
        assert refused.json == {"message": f"Too many attempts. Try again in {retry} seconds."}
        assert await db.collection("users").count(Filter()) == 3
