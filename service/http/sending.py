"""What a process may hold for clients that do not read their answers.

An answer larger than one chunk is written a chunk at a time, each one waited for until the socket
has taken it (`JsonHandler.send_bytes`). Its bytes count here from the moment it is accepted for
writing until its chunks are flushed, or until its connection closes and the rest is abandoned;
past `server.max_pending_bytes` a new large answer waits a moment for room, then is refused with a
503. Answers of one chunk or less go out in one write and are not counted: each connection holds at
most one of them, and only for `server.write_timeout` seconds. Live feeds write each change to a
subscriber at once only while its connection has nothing waiting (`send_now`); otherwise the change
waits in the subscriber's bounded queue.
"""
import asyncio
import hashlib
from collections.abc import Iterable

from tornado.iostream import IOStream

CHUNK = 64 * 1024  # bytes written (and waited for) at a time
ROOM_WAIT = 1.0  # seconds a large answer waits for room before the 503
ETAG_PIECE = 2047  # hashlib keeps the GIL for pieces under 2 KiB


def etag_of(parts: Iterable[bytes]) -> str:
    """Tornado's ETag of a body (SHA-1 hex, quoted), fed in small pieces: for a larger one hashlib
    lets go of the GIL, and taking it back waits behind the database driver's threads for longer
    than hashing the piece takes."""
    hasher = hashlib.sha1()
    for part in parts:
        for start in range(0, len(part), ETAG_PIECE):
            hasher.update(part[start:start + ETAG_PIECE])
    return f'"{hasher.hexdigest()}"'


class Backlog:
    """Bytes of large answers accepted for writing and not yet flushed, in this process."""

    def __init__(self) -> None:
        self.pending = 0
        self._waiters: list[asyncio.Future[None]] = []

    def fits(self, size: int, limit: int | None) -> bool:
        # One answer is always let through when nothing waits, even if it is larger than the limit
        # alone: it could never be sent otherwise.
        return limit is None or self.pending == 0 or self.pending + size <= limit

    async def admit(self, size: int, limit: int | None, wait: float = ROOM_WAIT) -> bool:
        """Counts `size` bytes as pending if they fit under `limit` within `wait` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not self.fits(size, limit):
            left = deadline - loop.time()
            if left <= 0:
                return False
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait_for(waiter, left)
            except TimeoutError:
                pass
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.pending += size
        return True

    def add(self, size: int) -> None:
        self.pending += size

    def release(self, size: int) -> None:
        if size <= 0:
            return
        self.pending -= size
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:  # each one looks again whether it fits now
            if not waiter.done():
                try:
                    waiter.set_result(None)
                except RuntimeError:  # its loop is closed (tests run one loop after another)
                    pass


BACKLOG = Backlog()


def send_now(stream: IOStream, data: bytes) -> bool:
    """Writes `data` at once when nothing waits to go out before it (the live feeds' fan-out): straight
    to the socket of a plain stream, whatever the kernel does not take kept by the stream, which
    sends it as its own writes. False when the stream is backed up or closed (nothing written)."""
    if stream.writing() or stream.closed():
        return False
    if type(stream) is IOStream:  # not TLS: the socket takes the bytes as they are
        try:
            sent = stream.socket.send(data)
        except OSError:  # would block, or the peer is gone: the stream finds out on its own write
            sent = 0
        if sent == len(data):
            return True
        data = data[sent:]
    stream.write(data)
    return True
