"""The hashing lane: its own threads, a bounded queue, 429 past it."""
import asyncio
import os
import threading
import time

import pytest

from service.core.kernel.errors import TooManyRequests
from service.core.kernel.passwords import HASH_NICENESS, REFRESH, Passwords


def cheap(**lane: int) -> Passwords:
    return Passwords(time_cost=1, memory_kib=1024, **lane)


async def _burst(passwords: Passwords, size: int) -> list:
    return await asyncio.gather(*(passwords.hash(f"password-{n}") for n in range(size)), return_exceptions=True)


@pytest.mark.parametrize("threads, queue", [(1, 0), (1, 1), (2, 3)])
def test_the_lane_takes_its_threads_plus_its_queue_and_refuses_the_rest(threads, queue):
    results = asyncio.run(_burst(cheap(threads=threads, queue=queue), 8))
    accepted = [r for r in results if isinstance(r, str)]
    refused = [r for r in results if isinstance(r, TooManyRequests)]
    assert len(accepted) == threads + queue and len(refused) == 8 - threads - queue
    assert all(r.startswith("$argon2id$") for r in accepted)
    assert all(r.retry_after >= 1 and r.body() == {"message": "Too many logins at once. Try again in a moment."}
               for r in refused)


def test_the_lane_is_free_again_once_its_work_is_done():
    passwords = cheap(threads=1, queue=0)

    async def twice() -> tuple[bool, int]:
        hashed = await passwords.hash("secret-pass")
        return await passwords.verify(hashed, "secret-pass"), passwords.in_lane
    assert asyncio.run(twice()) == (True, 0)


def test_hashing_runs_on_the_lanes_own_threads_not_the_default_executor():
    passwords = cheap(threads=1, queue=0)

    async def name() -> str:
        return (await passwords._run(lambda: threading.current_thread().name))[0]
    assert asyncio.run(name()).startswith("restify-hash")


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread CPU priority on this platform")
def test_the_lanes_threads_yield_the_cores_to_the_rest_of_the_process():
    # A burst of logins must not take the cores from the event loop: the lane's threads are nicer.
    passwords = cheap(threads=1, queue=0)

    async def niceness() -> int:
        return (await passwords._run(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))[0]
    assert asyncio.run(niceness()) == os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + HASH_NICENESS


def _costs(passwords: Passwords, hashed: str | None, times: int) -> list[tuple[bool, float, float]]:
    """(accepted, CPU seconds of the whole process, wall seconds) of `times` checks one after another."""
    async def checks() -> list[tuple[bool, float, float]]:
        found = []
        for _ in range(times):
            cpu, wall = time.process_time(), time.perf_counter()
            accepted = await passwords.verify(hashed, "a guess")
            found.append((accepted, time.process_time() - cpu, time.perf_counter() - wall))
        return found
    return asyncio.run(checks())


def test_a_check_for_an_unknown_account_takes_as_long_as_a_real_one_without_hashing():
    passwords = Passwords(time_cost=2, memory_kib=16384, threads=1, queue=0)
    hashed = asyncio.run(passwords.hash("the real one"))
    [(accepted, real_cpu, _)] = _costs(passwords, hashed, 1)
    assert accepted is False and real_cpu > 0.005
    unknown = _costs(passwords, None, REFRESH - 1)
    assert [accepted for accepted, _, _ in unknown] == [False] * (REFRESH - 1)
    # As long as the real check took in the lane (the one drawn: at least its hashing's CPU), at a small
    # part of that CPU.
    assert all(wall >= real_cpu * 0.8 for _, _, wall in unknown)
    assert sum(cpu for _, cpu, _ in unknown) < real_cpu / 2
    # One in REFRESH is computed, so the times drawn follow the machine's load.
    [(accepted, refreshed_cpu, _)] = _costs(passwords, None, 1)
    assert accepted is False and refreshed_cpu > real_cpu / 2


def test_a_check_for_an_unknown_account_takes_its_place_in_the_lane():
    passwords = cheap(threads=1, queue=0)

    async def two_at_once() -> list:
        await passwords.verify(await passwords.hash("the real one"), "a guess")  # a time to draw from
        return await asyncio.gather(passwords.verify(None, "a guess"), passwords.verify(None, "another"),
                                    return_exceptions=True)
    first, second = asyncio.run(two_at_once())
    assert first is False and isinstance(second, TooManyRequests)
