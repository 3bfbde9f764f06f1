"""Watches folders and runs a command in a fresh process after each burst of changes.

The command (the schema generator) runs in its own interpreter, so a broken or
half-saved module never corrupts a long-lived process; its exit code says whether
the new state is good. Nothing of the project is imported here: the CLI hands
over what to run.
"""
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from watchfiles import Change, awatch

Report = Callable[[bool, str], Awaitable[None] | None]
WATCHED_SUFFIXES = (".py", ".toml")


def relevant(change: tuple[Change, str]) -> bool:
    name = Path(change[1]).name
    return name.endswith(WATCHED_SUFFIXES) and not name.startswith(".") and "__pycache__" not in change[1]


async def run_once(command: Sequence[str]) -> tuple[bool, str]:
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await process.communicate()
    return process.returncode == 0, output.decode(errors="replace").strip()


async def _report(report: Report | None, ok: bool, output: str) -> None:
    if output:
        print(output, file=sys.stdout if ok else sys.stderr, flush=True)
    if report is not None:
        result = report(ok, output)
        if isinstance(result, Awaitable):
            await result


async def watch(paths: Sequence[Path], command: Sequence[str], report: Report | None = None,
                stop: asyncio.Event | None = None, debounce_ms: int = 50) -> None:
    """Runs `command` once, then again after every relevant change, until `stop` is set."""
    existing = [str(p) for p in paths if Path(p).exists()]
    started = False
    # The first (empty) yield comes once the watch is in place, so the first run happens
    # after it: a change saved during start-up is never missed.
    async for changes in awatch(*existing, debounce=debounce_ms, stop_event=stop, recursive=True,
                                yield_on_timeout=True, rust_timeout=200):
        if not started or any(relevant(change) for change in changes):
            started = True
            await _report(report, *await run_once(command))
