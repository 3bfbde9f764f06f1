"""What a subscriber is sent: one event, shared by every subscriber whose view of a change is the same.

An event is made once per view and change, so what a door makes of it (an SSE frame, a GraphQL
result for one selection) is made once too and kept in `shared`.
"""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CREATED, UPDATED, DELETED, RESET = "created", "updated", "deleted", "reset"


@dataclass(frozen=True)
class Event:
    kind: str                     # created | updated | deleted | reset
    id: str | None
    token: str | None             # where a client resumes from (SSE `id:`)
    body: dict[str, Any] | None   # {"data": resource}; deleted: {"data": {"id", "type"}}
    shared: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def made(self, key: Any, make: Callable[[], Any]) -> Any:
        """What `make()` gives for this event, made once for all its subscribers (by `key`)."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]
