"""Password hashing with argon2id, off the event loop (a hash takes tens of milliseconds)."""
import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError


class Passwords:
    def __init__(self, time_cost: int = 3, memory_kib: int = 65536) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=1)
        self._dummy = self._hasher.hash("a password nobody has")

    async def hash(self, password: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(None, self._hasher.hash, password)

    async def verify(self, hashed: str | None, password: str) -> bool:
        """Constant work whether or not the account exists: an unknown user still costs a hash."""
        def check() -> bool:
            try:
                return self._hasher.verify(hashed or self._dummy, password) and hashed is not None
            except (VerificationError, InvalidHashError):
                return False
        return await asyncio.get_running_loop().run_in_executor(None, check)
