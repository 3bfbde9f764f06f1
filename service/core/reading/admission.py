"""Expensive queries take turns, so that one client cannot keep the database busy for everyone.

An index query (REST, GraphQL lists and pages, MCP index tools, an action run on "all") is classed
expensive, before it reads anything, when it has:

- a search over searchable fields, own or related: a case-insensitive substring test, which no index
  can seek on any server (MongoDB scans an index or the collection; the embedded server runs a regex
  on every document, and a count reads every match); a search through `BelongsTo(...).searchable()`
  also reads the matching parents first;
- a relation sort (`sort=user.name`): it reads the visible parents in order and counts their records;
- an `in` / `nin` list of more than IN_VALUES values: on the embedded server an `in` on any field but
  the id is tested on every document, however the field is indexed;
- a deep page: more than DEEP_SKIP records skipped (by page number; a cursor reads any depth for about
  the price of the first page).

Turns: each owner (a user; a guest: the client address) runs one expensive query at a time, and a
process at most `query.expensive_concurrency` at once (unset: its number of CPU cores). Else the
query is refused before it starts: Busy (429, with a Retry-After of about one expensive query's
recent duration). A plain query never waits and is never refused here.
"""
import math
import os
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from service.core.declarations import Context, Field
from service.core.kernel import CONDITIONS, Busy
from service.core.reading.query import IndexQuery

if TYPE_CHECKING:
    from service.core.declarations import Resource, Restify

IN_VALUES = 100
DEEP_SKIP = 10_000
_SMOOTHING = 0.2  # weight of the latest duration in the running estimate


def expense(resource: "Resource", fields: list[Field], query: IndexQuery) -> str | None:
    """Why `query` is expensive, in a few words (the first reason found), or None for a plain one."""
    if query.search:
        if any(relation.search_fields for relation in resource.relations.values()):
            return "a search through related records"
        if any(f.is_searchable for f in fields):
            return "a search"
    if query.sort and "." in query.sort[0][0]:
        return f"a sort by {query.sort[0][0]}"
    long_lists = [name for name, operation, values in query.conditions
                  if CONDITIONS[operation].many and len(values) > IN_VALUES]
    if long_lists:
        return f"an in list of more than {IN_VALUES} values on {long_lists[0]}"
    if query.cursor is None and (query.page - 1) * query.per_page > DEEP_SKIP:
        return f"a page beyond the first {DEEP_SKIP:,} records"
    return None


def owner(context: Context) -> str:
    """Whose turn a query takes: the user, or for a guest the client address."""
    if context.user is not None:
        return f"user:{context.user.id}"
    return f"guest:{context.extras.get('address') or context.door}"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


class Admission:
    """The turns of one application's expensive queries in this process."""

    def __init__(self) -> None:
        self.running: set[str] = set()      # the owners with an expensive query under way
        self.seconds = 1.0                  # the running estimate of one expensive query's duration
        # Awaited once a turn is given, before the query runs (a test holds a query there).
        self.on_admit: Callable[[str], Awaitable[None]] | None = None

    def retry_after(self) -> int:
        return max(1, math.ceil(self.seconds))

    @asynccontextmanager
    async def turn(self, who: str, limit: int, reason: str) -> AsyncIterator[None]:
        """A turn for `who` while the block runs; Busy when `who` has one already, or `limit` are taken."""
        wait = self.retry_after()
        later = f"Try again in {wait} second{'s' if wait > 1 else ''}."
        if who in self.running:
            raise Busy(f"This query is expensive ({reason}), and expensive queries run one at a time for each "
                       f"user: wait for your other one to finish. {later}", retry_after=wait)
        if len(self.running) >= limit:
            raise Busy(f"This query is expensive ({reason}), and the server is running as many of those as it "
                       f"takes at once ({limit}). {later}", retry_after=wait)
        self.running.add(who)
        started = time.monotonic()
        try:
            if self.on_admit is not None:
                await self.on_admit(who)
            yield
        finally:
            self.running.discard(who)
            self.seconds += _SMOOTHING * (time.monotonic() - started - self.seconds)


_admissions: "weakref.WeakKeyDictionary[Restify, Admission]" = weakref.WeakKeyDictionary()


def admission(app: "Restify") -> Admission:
    """The application's admission (one per application, whichever pinned view asks)."""
    found = _admissions.get(app.origin)
    if found is None:
        found = _admissions[app.origin] = Admission()
    return found


def concurrency(app: "Restify") -> int:
    """`query.expensive_concurrency`, or the number of CPU cores."""
    return app.settings.cap("query", "expensive_concurrency") or cores()


@asynccontextmanager
async def taking_turns(app: "Restify", resource: "Resource", fields: list[Field], query: IndexQuery,
                       context: Context) -> AsyncIterator[None]:
    """Runs the block in a turn when `query` is expensive (Busy when none is free), else at once."""
    reason = expense(resource, fields, query)
    if reason is None:
        yield
        return
    async with admission(app).turn(owner(context), concurrency(app), reason):
        yield
