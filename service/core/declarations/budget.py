"""What one answer may hold: `server.max_response_bytes`, counted while the answer is built.

GraphQL and MCP give the Context of each request a `Budget` (`context.budget`), shared by the
operations one request runs; an operation called without one (REST, which runs one operation a
request; the console) takes a fresh one for itself (`of`, `held`). The changes of a live feed are
not bounded: they carry the eager relations the application declares, which no subscriber can widen.
The serialization path charges it with the encoded size of each resource object as it will be written
(the REST JSON: compact UTF-8): the records of a page (in one encoding of them all, unless the page
may be cut) or the record shown, and related records at
every depth once per place the answer writes them (`service.core.reading.loading` works out each related
record's size once, its nested relations included, and charges it per place). An answer over the
budget stops there with a 400 `RESPONSE_TOO_LARGE`, before the rest of it is built and before any of
it is encoded.

Two doors write something else than the REST JSON. GraphQL writes what a query selects: it passes
the selection as sparse fieldsets, core charges each record it builds once (`copies` False), and its
relation fields charge every further place they write one (`place`), aliases included. MCP's index
tools keep the first records that fit in `mcp.max_result_bytes` instead of refusing a page (`Room`):
the records past it are neither serialized nor given relations.
"""
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from service.core.kernel import ResponseTooLarge

if TYPE_CHECKING:
    from service.core.declarations.app import Restify
    from service.core.declarations.context import Context

# `,"relationships":{}` around the relations of a resource object, `:[]` around each relation's list,
# and `{"data":}` around the record show and attach answer with.
RELATIONSHIPS_MEMBER = 19
RELATION_LIST = 3
DATA_MEMBER = 9


def encoded_size(value: Any) -> int:
    """The bytes of `value` as the REST API encodes it."""
    try:
        return len(orjson.dumps(value))
    except TypeError:  # what orjson refuses takes the standard encoder, as the REST API's answers do
        return len(json.dumps(value, separators=(",", ":")).encode())


def own_size(data: dict[str, Any], keep: frozenset[str] | None = None) -> int:
    """The bytes of resource object `data` without its relationships, as written with the attributes
    a fieldset keeps (`keep`; None: all of them)."""
    if keep is not None or "relationships" in data:
        data = {k: v for k, v in data.items() if k != "relationships"}
        if keep is not None:
            data["attributes"] = {k: v for k, v in data["attributes"].items() if k in keep}
    return encoded_size(data)


def relation_size(name: str, sizes: list[int]) -> int:
    """The bytes of one relation in `relationships`: its name and the list of records of `sizes`."""
    return encoded_size(name) + RELATION_LIST + sum(sizes) + max(len(sizes) - 1, 0)


@dataclass(frozen=True)
class Room:
    """An index page that may be cut rather than refused: the first records whose answer fits in
    `bytes`, with `note(kept, records)` bytes more for saying that it was cut."""
    bytes: int
    note: Callable[[int, int], int]


class Budget:
    """The bytes one answer may still take (`limit`; None: no cap)."""

    __slots__ = ("limit", "used", "copies", "room", "cut", "door_measures", "_placed")

    def __init__(self, limit: int | None, copies: bool = True, room: Room | None = None,
                 door_measures: bool = False) -> None:
        self.limit = limit
        self.used = 0
        # True: the door measures the encoded answer (`check_encoded`), so the part of it an operation
        # builds last, with nothing built after it, is not encoded a first time to be measured.
        self.door_measures = door_measures
        # True: core charges every place a related record is written (the answer is the REST JSON);
        # False: core charges each record it builds once, and the door each further place (GraphQL).
        self.copies = copies
        self.room = room
        self.cut: tuple[int, int] | None = None  # (records kept, records of the page) when `room` cut one
        self._placed: dict[int, tuple[Any, dict[frozenset[str] | None, int]]] = {}  # id -> (object, size by keep)

    def charge(self, size: int) -> None:
        self.used += size
        if self.limit is not None and self.used > self.limit:
            raise ResponseTooLarge(self.limit)

    def check_encoded(self, answer: bytes) -> None:
        """The door's measure of the answer as encoded, where it measures it (`door_measures`)."""
        if self.door_measures and self.limit is not None and len(answer) > self.limit:
            raise ResponseTooLarge(self.limit)

    @property
    def spent(self) -> bool:
        """Whether the answer went over the budget (a door that goes on after the error asks)."""
        return self.limit is not None and self.used > self.limit

    def place(self, item: dict[str, Any], keep: frozenset[str] | None = None) -> None:
        """One more place the door writes related resource object `item` (GraphQL), with the attributes
        `keep` there: the first is the copy core built and charged, each other one is charged here."""
        placed = self._placed.get(id(item))
        if placed is None:  # the object is kept: its id stays its own while the answer is built
            self._placed[id(item)] = (item, {})
            return
        sizes = placed[1]
        if keep not in sizes:
            sizes[keep] = own_size(item, keep)
        self.charge(sizes[keep])


def budget_of(app: "Restify", context: "Context") -> Budget:
    """The budget of the answer `context` is for: the door's, or a fresh one."""
    return context.budget if context.budget is not None else Budget(app.settings.max_response_bytes)


@contextmanager
def held_budget(app: "Restify", context: "Context") -> Iterator[Budget]:
    """`context.budget` while one operation builds its answer in several steps: the door's, or a
    fresh one, taken back afterwards (a context may outlive the operation, as a live feed's does)."""
    if context.budget is not None:
        yield context.budget
        return
    context.budget = budget_of(app, context)
    try:
        yield context.budget
    finally:
        context.budget = None
