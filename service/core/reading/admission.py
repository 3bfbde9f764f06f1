"""Expensive queries take turns, so that one client cannot keep the database busy for everyone.

An index query (REST, GraphQL lists and pages, MCP index tools, an action run on "all") is classed
expensive, before it reads anything, when it has:

- a search over searchable fields, own or related: a case-insensitive substring test, which no index
  can seek on any server (MongoDB scans an index or the collection; the embedded server runs a regex
  on every document, and a count reads every match); a search through `BelongsTo(...).searchable()`
  also reads the matching parents first (unless the search is ranked: `sort=relevance` leaves related
  records out). A search MongoDB answers from the text index (`searchable(text=True)`, `$text`) is not
  expensive;
- a relation sort (`sort=user.name`): it reads the visible parents in order and counts their records;
- a filter through a relation (`user.name[eq]=Ann`, `has=comments`): it reads the related records first;
- an `in` / `nin` list of more than IN_VALUES values: on the embedded server an `in` on any field but
  the id is tested on every document, however the field is indexed;
- an `any` or `not` in its filter object: `$or` and `$nor`, which the embedded server tests in Python
  on every document (about 3 s at 100,000 posts);
- a deep page: more than DEEP_SKIP records skipped (by page number; a cursor reads any depth for about
  the price of the first page).

Turns: each owner (a user; a guest: the client address) runs one expensive query at a time, and a
process at most `query.expensive_concurrency` at once (unset: its number of CPU cores).

Rests: an expensive query holds the database for its whole length (the embedded server runs one
command at a time), and plain reads queue behind it; taking turns alone would let one owner's clients
loop them back to back. So after an expensive query that took T seconds (from its admission to its
answer), its owner rests T x `query.expensive_rest` (1: as long as it ran, so at most half of an
owner's time goes to them), and the process T x (1 - s) / s, s being `query.expensive_share` (0.25:
all owners' expensive queries together take at most a quarter of its time; several may still run at
once, and the rests add up). A query asked for during a rest waits for its end when that comes within
PACED seconds (so a client paging through search results is slowed, not refused), else it is refused.

Refused before it starts: Busy (429, the message says which rule, and Retry-After the whole seconds until
that rest ends; when a turn is taken, about one expensive query's recent duration). An owner that asks
again before the Retry-After of its last refusal has passed gets its refusal after a pause (up to PACED
seconds, the rest of that wait): a client looping on refusals would otherwise cost the process a request
each few milliseconds for nothing. A plain query never waits and is never refused here.
"""
import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from service.core.declarations import Context, Field, PerApplication
from service.core.kernel import COMPOUNDS, CONDITIONS, Busy, cores, leaves, relation_conditions
from service.core.reading.query import IndexQuery, ranked, text_search

if TYPE_CHECKING:
    from service.core.declarations import Resource, Restify

IN_VALUES = 100
DEEP_SKIP = 10_000
_SMOOTHING = 0.2  # weight of the latest duration in the running estimate
_MAX_RESTING = 1000  # owners' rests kept before those that are over are forgotten
PACED = 1.0  # seconds a query waits for a rest to end; a longer rest refuses it


def expense(resource: "Resource", fields: list[Field], query: IndexQuery, text: bool = False) -> str | None:
    """Why `query` is expensive, in a few words (the first reason found), or None for a plain one.
    `text`: the database searches text indexes (`$text`)."""
    if query.search:
        if not ranked(query) and any(relation.search_fields for relation in resource.relations.values()):
            return "a search through related records"
        if any(f.is_searchable for f in fields) and not (text and text_search(resource, fields)):
            return "a search"
    if query.sort and "." in query.sort[0][0]:
        return f"a sort by {query.sort[0][0]}"
    if relation_conditions(query.conditions):
        return "a filter through related records"
    long_lists = [name for name, operation, values in leaves(query.conditions)
                  if CONDITIONS[operation].many and len(values) > IN_VALUES]
    if long_lists:
        return f"an in list of more than {IN_VALUES} values on {long_lists[0]}"
    if any(operation in COMPOUNDS for _, operation, _ in query.conditions):
        # `$or` and `$nor` the embedded server tests in Python on every record (seconds at 100,000).
        return "a filter with any or not"
    if query.cursor is None and (query.page - 1) * query.per_page > DEEP_SKIP:
        return f"a page beyond the first {DEEP_SKIP:,} records"
    return None


def owner(context: Context) -> str:
    """Whose turn a query takes: the user, or for a guest the client address."""
    if context.user is not None:
        return f"user:{context.user.id}"
    return f"guest:{context.extras.get('address') or context.door}"


class Admission:
    """The turns and rests of one application's expensive queries in this process."""

    def __init__(self) -> None:
        self.running: set[str] = set()      # the owners with an expensive query under way
        self.seconds = 1.0                  # the running estimate of one expensive query's duration
        self.resting: dict[str, float] = {}  # owner -> when (on `clock`) its rest ends
        self.process_rest = 0.0             # when the process's rest ends
        self.clock: Callable[[], float] = time.monotonic  # what durations and rests are read on (tests set theirs)
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # how a query waits out a rest (likewise)
        self.waiting: set[str] = set()      # the owners whose expensive query waits for a rest to end
        self.refused: dict[str, float] = {}  # owner -> until when (on `clock`) its last refusal said to wait
        # Awaited once a turn is given, before the query runs (a test holds a query there).
        self.on_admit: Callable[[str], Awaitable[None]] | None = None

    def retry_after(self) -> int:
        return max(1, math.ceil(self.seconds))

    def _refuse(self, who: str, limit: int, reason: str) -> Busy | None:
        """Why `who` may not start an expensive query now (None: it may, perhaps after a short rest)."""
        expensive = f"This query is expensive ({reason}), and"
        now = self.clock()
        if who in self.running or who in self.waiting:
            return _busy(f"{expensive} expensive queries run one at a time for each user: wait for your other one "
                         "to finish.", self.retry_after())
        if self.resting.get(who, 0.0) > now + PACED:
            return _busy(f"{expensive} after one, each user rests as long as it took (query.expensive_rest) "
                         "before the next.", math.ceil(self.resting[who] - now))
        if len(self.running) >= limit:
            return _busy(f"{expensive} the server is running as many of those as it takes at once ({limit}).",
                         self.retry_after())
        if self.process_rest > now + PACED:
            return _busy(f"{expensive} the server gives them only part of its time (query.expensive_share).",
                         math.ceil(self.process_rest - now))
        return None

    async def _admit(self, who: str, limit: int, reason: str) -> None:
        """Raises Busy, or returns once `who` may start: at once, or after waiting out a short rest (its
        own or the process's; another query's may lengthen the process's meanwhile, up to PACED in all).
        An owner asking again before its last refusal's Retry-After passed is first paused (once)."""
        deadline, paused = self.clock() + PACED, False
        while True:
            refused = self._refuse(who, limit, reason)
            if refused is not None:
                pause, paused = (0.0 if paused else self._pause(who)), True
                if pause <= 0:
                    self._refused(who, refused)
                    raise refused
                await self.sleep(pause)
                deadline = self.clock() + PACED
                continue
            wait = max(self.resting.get(who, 0.0), self.process_rest) - self.clock()
            if wait <= 0:
                return
            if self.clock() + wait > deadline:  # the process's rest grew while this one waited
                raise _busy(f"This query is expensive ({reason}), and the server gives them only part of its time "
                            "(query.expensive_share).", math.ceil(wait))
            self.waiting.add(who)
            try:
                await self.sleep(wait)
            finally:
                self.waiting.discard(who)

    def _pause(self, who: str) -> float:
        """How long `who` is paused before a refusal: what is left of its last refusal's Retry-After, at
        most PACED (0: it waited as told, or was never refused)."""
        return min(PACED, self.refused.get(who, 0.0) - self.clock())

    def _refused(self, who: str, refused: Busy) -> None:
        now = self.clock()
        if len(self.refused) >= _MAX_RESTING:  # forget the refusals whose wait is over
            self.refused = {w: until for w, until in self.refused.items() if until > now}
        self.refused[who] = now + (refused.retry_after or 1)

    @asynccontextmanager
    async def turn(self, who: str, limit: int, reason: str, rest: float = 0.0,
                   share: float = 1.0) -> AsyncIterator[None]:
        """A turn for `who` while the block runs; Busy when `who` has one already, `limit` are taken, or
        `who` or the process rests longer than PACED (a shorter rest is waited out). Afterwards `who`
        rests `rest` times what the block took, and the process long enough for the block to have taken
        `share` of its time."""
        await self._admit(who, limit, reason)
        self.running.add(who)
        started = self.clock()
        try:
            if self.on_admit is not None:
                await self.on_admit(who)
            yield
        finally:
            self.running.discard(who)
            ended = self.clock()
            took = ended - started
            self.seconds += _SMOOTHING * (took - self.seconds)
            self._rest(who, ended, took * rest, took * (1 - share) / share)

    def _rest(self, who: str, now: float, own: float, process: float) -> None:
        if own > 0:
            if len(self.resting) >= _MAX_RESTING:  # forget the rests that are over (guests' addresses pile up)
                self.resting = {w: until for w, until in self.resting.items() if until > now}
            self.resting[who] = now + own
        if process > 0:
            self.process_rest = max(self.process_rest, now) + process


def _busy(message: str, wait: int) -> Busy:
    wait = max(1, wait)
    return Busy(f"{message} Try again in {wait} second{'s' if wait > 1 else ''}.", retry_after=wait)


admission = PerApplication(Admission)  # the application's admission, whichever pinned view asks


def concurrency(app: "Restify") -> int:
    """`query.expensive_concurrency`, or the number of CPU cores."""
    return app.settings.cap("query", "expensive_concurrency") or cores()


def rest(app: "Restify") -> float:
    """`query.expensive_rest`: how many times its last expensive query's duration an owner rests (0: none)."""
    return app.settings.non_negative("query", "expensive_rest")


def estimate_seconds(app: "Restify") -> float:
    """`query.estimated_count_seconds`: how long the estimated total of a list without filters is kept."""
    return app.settings.non_negative("query", "estimated_count_seconds")


def share(app: "Restify") -> float:
    """`query.expensive_share`: the part of a process's time its expensive queries may take (1: all of it)."""
    return min(1.0, float(app.settings.positive("query", "expensive_share")))


def taking_turns(app: "Restify", resource: "Resource", fields: list[Field], query: IndexQuery,
                 context: Context, also: str | None = None) -> AbstractAsyncContextManager[float]:
    """Runs the block in a turn when `query` is expensive (Busy when none is free), else at once. Gives
    the seconds the query's count may be kept (`query.expensive_count_seconds`; 0 for a plain query,
    whose count is cheap): paging through a search asks the same count on every page. `also`: a reason
    the caller knows of besides the query's own (an aggregation's shape)."""
    return _Turn(app, resource, fields, query, context, also)


class _Turn:
    """`taking_turns`, as a class: most queries are plain, and a generator-based context manager costs
    them more than the question."""

    def __init__(self, app: "Restify", resource: "Resource", fields: list[Field], query: IndexQuery,
                 context: Context, also: str | None) -> None:
        self.app, self.resource, self.fields, self.query, self.context, self.also = \
            app, resource, fields, query, context, also
        self.turn: AbstractAsyncContextManager[None] | None = None

    async def __aenter__(self) -> float:
        app, query = self.app, self.query
        text = bool(query.search) and (await app.db.index_support()).text_search
        reason = expense(self.resource, self.fields, query, text) or self.also
        if reason is None:
            return 0.0
        self.turn = admission(app).turn(owner(self.context), concurrency(app), reason, rest(app), share(app))
        await self.turn.__aenter__()
        return app.settings.non_negative("query", "expensive_count_seconds")

    async def __aexit__(self, *raised: Any) -> bool | None:
        return await self.turn.__aexit__(*raised) if self.turn is not None else None
