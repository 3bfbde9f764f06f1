"""The hashing lane: its own threads, a bounded queue, 429 past it."""
import asyncio
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher

from service.core.kernel.errors import TooManyRequests
from service.core.kernel import passwords as lane
from service.core.kernel.passwords import HASH_NICENESS, Passwords, SharedLane


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


class Watched(PasswordHasher):
    """The real argon2 hasher, noting when each check it computes ran (`runs`, shared if given)."""

    def __init__(self, runs: list[tuple[float, float]] | None = None, time_cost: int = 1,
                 memory_cost: int = 8192) -> None:
        super().__init__(time_cost=time_cost, memory_cost=memory_cost, parallelism=1)
        self.runs = runs if runs is not None else []

    @property
    def checks(self) -> int:
        return len(self.runs)

    def verify(self, hashed: str | bytes, password: str | bytes) -> Literal[True]:
        started = time.perf_counter()
        try:
            return super().verify(hashed, password)
        finally:
            self.runs.append((started, time.perf_counter()))


def counted(queue: int = 0) -> tuple[Passwords, Watched]:
    passwords = Passwords(time_cost=1, memory_kib=8192, threads=1, queue=queue)
    passwords._hasher = hasher = Watched()
    return passwords, hasher


def _timed_checks(passwords: Passwords, hashed: str | None, times: int) -> list[tuple[bool, float]]:
    """(accepted, wall seconds) of `times` checks one after another."""
    async def checks() -> list[tuple[bool, float]]:
        found = []
        for _ in range(times):
            wall = time.perf_counter()
            found.append((await passwords.verify(hashed, "a guess"), time.perf_counter() - wall))
        return found
    return asyncio.run(checks())


def test_a_check_for_an_unknown_account_takes_as_long_as_a_real_one_without_hashing(monkeypatch):
    monkeypatch.setattr(lane, "REFRESH_SECONDS", 2.0)
    passwords, hasher = counted()
    [(accepted, _)] = _timed_checks(passwords, asyncio.run(passwords.hash("the real one")), 1)
    assert accepted is False and hasher.checks == 1
    # A storm: none of them computed while the latest real check is recent, each as long in the lane as
    # one of the real checks took (the start-up hash's or this one's).
    unknown = _timed_checks(passwords, None, 6)
    assert unknown == [(False, wall) for _, wall in unknown] and hasher.checks == 1
    assert all(wall >= min(passwords._checks) for _, wall in unknown)
    # Once the latest real check is older than REFRESH_SECONDS, the next is computed, so the times drawn
    # follow the machine's load; the one after it is drawn again.
    time.sleep(2.0)
    assert [accepted for accepted, _ in _timed_checks(passwords, None, 2)] == [False, False]
    assert hasher.checks == 2


def test_a_burst_of_unknown_accounts_computes_one_check_at_most(monkeypatch):
    # Guesses arriving together once the latest real check is old compute one between them.
    monkeypatch.setattr(lane, "REFRESH_SECONDS", 0.5)
    passwords, hasher = counted(queue=16)
    _timed_checks(passwords, asyncio.run(passwords.hash("the real one")), 1)
    time.sleep(0.5)

    async def burst() -> list[bool]:
        return await asyncio.gather(*(passwords.verify(None, f"guess {n}") for n in range(16)))
    assert asyncio.run(burst()) == [False] * 16 and hasher.checks == 2


def test_unknown_accounts_right_after_start_up_draw_the_start_up_hashs_time():
    passwords, hasher = counted(queue=8)
    [(accepted, wall)] = _timed_checks(passwords, None, 1)
    assert accepted is False and hasher.checks == 0 and wall >= passwords._checks[0] == passwords._seconds


def test_a_check_for_an_unknown_account_takes_its_place_in_the_lane():
    passwords = cheap(threads=1, queue=0)

    async def two_at_once() -> list:
        await passwords.verify(await passwords.hash("the real one"), "a guess")  # a time to draw from
        return await asyncio.gather(passwords.verify(None, "a guess"), passwords.verify(None, "another"),
                                    return_exceptions=True)
    first, second = asyncio.run(two_at_once())
    assert first is False and isinstance(second, TooManyRequests)


def test_processes_sharing_the_lane_never_hash_at_once(tmp_path):
    # Two lanes as two serving processes have them: each its own thread, the slot (one) in common.
    runs: list[tuple[float, float]] = []
    lanes = [Passwords(time_cost=1, memory_kib=8192, threads=1, queue=8, shared=SharedLane(tmp_path, 1))
             for _ in range(2)]
    for passwords in lanes:
        passwords._hasher = Watched(runs, time_cost=2, memory_cost=16384)
    hashed = lanes[0]._hasher.hash("the real one")

    async def both() -> list[bool]:
        return await asyncio.gather(*(passwords.verify(hashed, f"guess {n}") for passwords in lanes for n in range(4)))
    assert asyncio.run(both()) == [False] * 8 and len(runs) == 8
    ordered = sorted(runs)
    assert all(end <= next_start for (_, end), (next_start, _) in zip(ordered, ordered[1:], strict=False))


def _hold_slot(directory: str, holding: Any) -> None:
    with SharedLane(Path(directory), 1).slot():
        holding.set()
        time.sleep(60)


def test_a_slot_held_by_a_process_that_dies_is_free_again(tmp_path):
    forking = multiprocessing.get_context("fork")
    holding = forking.Event()
    holder = forking.Process(target=_hold_slot, args=(str(tmp_path), holding), daemon=True)
    holder.start()
    try:
        assert holding.wait(30)
        passwords = Passwords(time_cost=1, memory_kib=8192, threads=1, queue=1, shared=SharedLane(tmp_path, 1))
        hashing = passwords._executor.submit(passwords._hashing, passwords._hasher.hash, "a password")
        time.sleep(0.3)
        assert not hashing.done()  # it waits for the slot
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(10)
    assert hashing.result(timeout=30).startswith("$argon2id$")
