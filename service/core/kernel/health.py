"""Readiness: does the database answer? Asked by `/readyz` (and anything else that probes)."""
import asyncio
import logging

from storage import Database, StorageError

log = logging.getLogger("restify.health")

# Probes give up quickly (Kubernetes waits 1 s by default): a slow answer counts as "not ready".
READY_TIMEOUT = 1.0


class Readiness:
    """Pings the database; probes that arrive while a ping is in flight share it, so a flood of
    `/readyz` requests costs one round trip, not one each."""

    def __init__(self, db: Database, timeout: float = READY_TIMEOUT) -> None:
        self.db = db
        self.timeout = timeout
        self._pending: asyncio.Future[bool] | None = None

    async def check(self) -> bool:
        if self._pending is None or self._pending.done():
            self._pending = asyncio.ensure_future(self._ping())
        # Shielded: a probe that goes away must not cancel the ping the others wait for.
        return await asyncio.shield(self._pending)

    async def _ping(self) -> bool:
        try:
            await asyncio.wait_for(self.db.ping(), self.timeout)
        except (StorageError, TimeoutError) as error:
            log.debug("database not ready: %s", str(error) or "no answer in time")
            return False
        return True
