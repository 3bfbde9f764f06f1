"""What a subscriber is sent: one event, shared by every subscriber whose view of a change is the same.

An event is made once per view and change, so what a door makes of it (an SSE frame, a GraphQL
result for one selection) is made once too and kept in `shared`.
"""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CREATED, UPDATED, DELETED, RESET = "created", "updated", "deleted", "reset"


class _Shared:
    shared: dict[Any, Any]

    def made(self, key: Any, make: Callable[[], Any]) -> Any:
        """What `make()` gives for this, made once for all its subscribers (by `key`)."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]


@dataclass(frozen=True)
class Event(_Shared):
    kind: str                     # created | updated | deleted | reset
    id: str | None
    token: str | None             # where a client resumes from (SSE `id:`)
    body: dict[str, Any] | None   # {"data": resource}; deleted: {"data": {"id", "type"}}
    shared: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


class Batch(list[Event], _Shared):
    """Events a feed gives several subscribers together, in order: what a door makes of the whole
    batch (one SSE chunk, the GraphQL messages of one selection) is made once for all of them."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = {}
