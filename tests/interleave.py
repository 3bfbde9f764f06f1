"""A way into the middle of a sequence of writes, for tests: a driver command listener that runs an
action just before the n-th command of a kind on a collection is sent. The action runs in the
driver's thread, and the operation that sends the command waits for it, so what it does happens
exactly between two writes. (Repository hooks run before all of a bulk write's writes or after all
of them, never between two.)

`on_loop` runs a coroutine on the test's event loop from the action, e.g. another user's request to
the test server, while the operation waits."""
import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from pymongo import monitoring

from tests.commands import CommandCounter


@dataclass
class _Cue:
    command: str
    collection: str
    nth: int
    action: Callable[[], Any]
    seen: int = 0


class Interleave(CommandCounter):
    """Counts the commands as `CommandCounter` does, and runs the actions set with `before`."""

    def __init__(self) -> None:
        super().__init__()
        self._cues: list[_Cue] = []

    def before(self, command: str, collection: str, nth: int, action: Callable[[], Any]) -> None:
        """Runs `action` once, just before the `nth` `command` (e.g. "insert", "findAndModify") on `collection`."""
        self._cues.append(_Cue(command, collection, nth, action))

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        super().started(event)
        for cue in self._cues:
            if event.command_name == cue.command and event.command.get(cue.command) == cue.collection:
                cue.seen += 1
                if cue.seen == cue.nth:
                    cue.action()


def on_loop(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
    """Runs `coroutine` on `loop` from another thread (the driver's) and waits for its result."""
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)
