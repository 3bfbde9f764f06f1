"""The hashing lane: its own threads, a bounded queue, 429 past it."""
import asyncio
import os
import threading

import pytest

from service.core.kernel.errors import TooManyRequests
from service.core.kernel.passwords import HASH_NICENESS, Passwords


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
        return await passwords._run(lambda: threading.current_thread().name)
    assert asyncio.run(name()).startswith("restify-hash")


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread CPU priority on this platform")
def test_the_lanes_threads_yield_the_cores_to_the_rest_of_the_process():
    # A burst of logins must not take the cores from the event loop: the lane's threads are nicer.
    passwords = cheap(threads=1, queue=0)

    async def niceness() -> int:
        return await passwords._run(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert asyncio.run(niceness()) == os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + HASH_NICENESS
