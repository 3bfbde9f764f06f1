"""Password hashing with argon2id, in its own lane.

A hash takes tens of milliseconds of CPU and tens of MiB of memory. It runs on a thread pool of
its own (`auth.hash_threads`; unset: half the cores, at least one), never the loop's default
executor, so file reads and other blocking work never queue behind a burst of logins. The lane
holds at most `auth.hash_queue` waiting jobs besides the running ones; past that the answer is 429
with `Retry-After` (an estimate from the recent cost of a hash), instead of an ever longer wait.

The lane's threads also run at a lower CPU priority (`HASH_NICENESS`, on Linux, where a thread has
its own): a burst of logins then takes the cores only when the event loop and the database leave
them idle, so it slows the logins, not every other request. A lower priority does not keep a hash
from slowing what runs beside it on a core's sibling or through the memory it sweeps (64 MiB each),
so by default the lane leaves half the cores to the rest: on two cores, a login storm's hashes moved
plain reads' p99 under the hostile benchmark's mix about 12% less with one thread than with two.

The processes of one `restify serve --processes N` share the lane's width: before forking, the parent
gives them `share_lane` (a directory of one lock file per slot), and a hash runs only while its thread
holds a slot. Otherwise N processes would each hash on half the cores, and a login storm spread over
them takes every core. The slots are `flock`s, which the kernel lets go of when a process dies.

A password check for an account that does not exist must take as long as one that does, or the time
of the answer tells which addresses have accounts. It need not cost as much: it takes its place in
the lane like any check and holds it for as long as a real check took, one drawn from the latest
(`SAMPLES`), without hashing. When the latest real check is older than `REFRESH_SECONDS`, the next
one is computed for real, so the times drawn keep up with the machine's load even when no real
account is being tried. A storm of guesses at unknown addresses then waits in the lane as before,
costs at most one real hash every `REFRESH_SECONDS` however fast it comes (from however many
addresses), and leaves the cores to everyone else.
"""
import asyncio
import fcntl
import math
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from service.core.kernel.errors import TooManyRequests
from service.core.kernel.machine import cores

T = TypeVar("T")

HASH_NICENESS = 10  # added to the process's niceness for the lane's threads
SAMPLES = 32  # the latest real checks' times, which a check for an unknown account takes one of
REFRESH_SECONDS = 10.0  # a check for an unknown account is computed when the latest real one is older


def _lower_priority() -> None:
    """Makes the calling thread nicer than the rest of the process (Linux schedules threads alone)."""
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + HASH_NICENESS)
    except (AttributeError, OSError):  # no per-thread priority here: the lane runs at the process's
        pass


def lane_width(threads: int | None) -> int:
    """How many hashes run at once: `auth.hash_threads`, else half the cores (at least one)."""
    return max(1, int(threads) if threads else cores() // 2)


class SharedLane:
    """`slots` lock files in `directory`, which the processes forked from one parent take turns on."""

    def __init__(self, directory: Path, slots: int) -> None:
        self.paths = [directory / f"slot-{n}.lock" for n in range(max(1, slots))]
        for path in self.paths:
            path.touch()
        self._opened = threading.local()  # each thread its own descriptors: a flock belongs to one

    def _descriptors(self) -> list[int]:
        if not hasattr(self._opened, "fds"):
            self._opened.fds = [os.open(path, os.O_RDWR) for path in self.paths]
        return self._opened.fds

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Holds a free slot, or waits for one (this thread's own, so waiting threads spread)."""
        fds = self._descriptors()
        held = next((fd for fd in fds if _try_lock(fd)), None)
        if held is None:
            held = fds[threading.get_native_id() % len(fds)]
            fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


_shared: SharedLane | None = None  # set by a parent before it forks its serving processes


def share_lane(directory: Path | None, threads: int | None = None) -> None:
    """Makes the lanes of the processes forked after this call share `lane_width(threads)` slots in
    `directory` (None: lanes made from now on share nothing)."""
    global _shared
    _shared = SharedLane(directory, lane_width(threads)) if directory is not None else None


class Passwords:
    def __init__(self, time_cost: int = 3, memory_kib: int = 65536, threads: int | None = None,
                 queue: int = 64, shared: SharedLane | None = None) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=1)
        self._threads = lane_width(threads)
        self._shared = shared if shared is not None else _shared
        self._capacity = self._threads + max(0, int(queue))
        self._executor = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="restify-hash",
                                            initializer=_lower_priority)
        self._in_lane = 0  # running + waiting; only touched on the event loop's thread
        started = time.perf_counter()
        self._dummy = self._hasher.hash("a password nobody has")
        self._seconds = time.perf_counter() - started  # recent cost of one hash, for Retry-After
        # How long the latest real checks took; a check costs what a hash does, so the start-up hash is
        # the first. A burst of unknown accounts arriving before any real check then draws from it.
        self._checks: deque[float] = deque([self._seconds], maxlen=SAMPLES)
        self._refreshed_at = time.monotonic()  # when the latest real check started

    @property
    def threads(self) -> int:
        """How many hashes run at once."""
        return self._threads

    @property
    def in_lane(self) -> int:
        return self._in_lane

    async def _run(self, work: Callable[..., T], *args: object) -> tuple[T, float]:
        """`work(*args)` on the lane, and how long it took there (not counting its wait in the queue)."""
        if self._in_lane >= self._capacity:
            wait = math.ceil(self._in_lane * self._seconds / self._threads)
            raise TooManyRequests("Too many logins at once. Try again in a moment.", retry_after=max(1, wait))
        self._in_lane += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, _timed, work, *args)
        finally:
            self._in_lane -= 1

    def _took(self, seconds: float) -> None:
        self._seconds = 0.8 * self._seconds + 0.2 * seconds

    def _hashing(self, work: Callable[..., T], *args: object) -> T:
        """`work` while holding a slot of the lane the serving processes share, if they share one."""
        with self._shared.slot() if self._shared is not None else nullcontext():
            return work(*args)

    async def hash(self, password: str) -> str:
        hashed, seconds = await self._run(self._hashing, self._hasher.hash, password)
        self._took(seconds)
        return hashed

    async def verify(self, hashed: str | None, password: str) -> bool:
        """Whether `password` is the one `hashed` was made from. None (no such account): False, after as
        long in the lane as a real check takes (see the module)."""
        now = time.monotonic()
        if hashed is None and now - self._refreshed_at < REFRESH_SECONDS:
            await self._run(time.sleep, secrets.choice(self._checks))
            return False
        self._refreshed_at = now  # claimed before it runs: the rest of a burst draws instead

        def check() -> bool:
            try:
                return self._hasher.verify(hashed or self._dummy, password) and hashed is not None
            except (VerificationError, InvalidHashError):
                return False
        accepted, seconds = await self._run(self._hashing, check)
        self._took(seconds)
        self._checks.append(seconds)
        return accepted


def _timed(work: Callable[..., T], *args: object) -> tuple[T, float]:
    started = time.perf_counter()
    return work(*args), time.perf_counter() - started
