"""Readiness: probes that arrive together share one database ping."""
import asyncio

from service.core.kernel.health import Readiness


async def test_concurrent_checks_share_one_ping(db, commands):
    readiness = Readiness(db)
    assert await asyncio.gather(*(readiness.check() for _ in range(10))) == [True] * 10
    assert [name for name, _ in commands.commands].count("ping") == 1
    assert await readiness.check() is True  # a later probe pings again
    assert [name for name, _ in commands.commands].count("ping") == 2
