"""One execution of a subscription's selection per live event, whoever receives it.

The feeds hand every subscriber of the same view the same event (service/core/live/events.py),
and the subscription resolver turns it into one `ChangePayload`, the same object for all of them.
The executor of each subscriber's events keeps on that payload the result of its selection (the
operation's text, name and variables): a second subscriber with the same selection gets that
result, and its JSON, without executing or encoding again. Subscribers of different users share a
payload only when the record they are shown is the same (service/core/live/verdicts.py): what a
selection makes of it is then the same too.
"""
import asyncio
from collections.abc import Awaitable
from typing import Any, cast

from graphql import ExecutionResult

from service.graphql.fast import PlainFieldExecutor


class ChangePayload(dict):
    """The root value of one event's executions, and their results by selection."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results: dict[Any, Any] = {}


class SharedResult(ExecutionResult):
    """An execution result that keeps its JSON once a door made it (`encoded`)."""

    __slots__ = ("encoded",)

    def __init__(self, result: ExecutionResult) -> None:
        super().__init__(result.data, result.errors, result.extensions)
        self.encoded: bytes | None = None


class SharedEventExecutor(PlainFieldExecutor):
    """Executes an event for a selection once; the subscribers that share both share the result."""

    def execute_operation(self, serially: bool | None = None) -> Any:
        payload = self.root_value
        if not isinstance(payload, ChangePayload):
            return super().execute_operation(serially)  # the subscription's own start, or a query
        key = self.selection()
        if key not in payload.results:
            made = super().execute_operation(serially)
            kept = self._kept(made) if self.is_awaitable(made) else SharedResult(cast(ExecutionResult, made))
            payload.results[key] = kept
        return payload.results[key]

    def selection(self) -> tuple[Any, ...]:
        source = self.operation.loc.source.body if self.operation.loc is not None else id(self.operation)
        name = self.operation.name.value if self.operation.name is not None else None
        return source, name, repr(self.variable_values)

    def _kept(self, made: Awaitable[ExecutionResult]) -> Any:
        """A result still being made: one task makes it, and each subscriber awaits that task."""
        async def finish() -> SharedResult:
            return SharedResult(await made)
        return _Shared(asyncio.ensure_future(finish()))


class _Shared:
    """An awaitable that many may await: the one task that makes the result."""

    def __init__(self, task: Any) -> None:
        self._task = task

    def __await__(self) -> Any:
        return self._task.__await__()
