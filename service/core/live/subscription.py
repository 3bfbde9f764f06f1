"""One subscriber's view of one repository's changes: what is sent to them, and why it stops.

    FeedEnded -> ConsumerTooSlow | AccessRevoked   why a subscription stopped
"""
import asyncio
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from service.core.declarations import Context, Resource
from service.core.kernel import satisfies
from service.core.live import audience, verdicts
from service.core.live.events import DELETED, RESET, Event
from service.core.reading import IndexQuery, visibility_of
from storage import Change, HistoryLost

if TYPE_CHECKING:
    from service.core.live.feeds import Feeds
    from service.core.live.views import View

Sink = Callable[[list[Event]], bool]   # writes events at once, or says False (they are queued)


class FeedEnded(Exception):
    message = "The feed ended."
    code = "FEED_ENDED"


class ConsumerTooSlow(FeedEnded):
    message = "The subscriber did not keep up with the changes and was dropped."
    code = "TOO_SLOW"


class AccessRevoked(FeedEnded):
    message = "The token of this subscription was revoked or has expired."
    code = "UNAUTHENTICATED"


class _Signal:
    """An event its one reader waits on with a timeout, as `asyncio.wait_for(event.wait(), t)` would
    but without the task that makes per wait (Python 3.11): a fan-out wakes every subscriber."""

    def __init__(self) -> None:
        self._set = False
        self._waiter: asyncio.Future[bool] | None = None

    def set(self) -> None:
        self._set = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(True)

    def clear(self) -> None:
        self._set = False

    async def wait(self, timeout: float | None) -> bool:
        """True once set, False after `timeout` seconds without."""
        if self._set:
            return True
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            return await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(waiter: "asyncio.Future[bool]") -> None:
    if not waiter.done():
        waiter.set_result(False)


class Subscription:
    """One subscriber's view of one repository: its filters, its queue, the ids sent to it."""

    def __init__(self, feeds: "Feeds", resource: Resource, context: Context, query: IndexQuery,
                 record_id: str | None) -> None:
        app = feeds.app
        self.feeds, self.resource, self.context = feeds, resource, context
        self.equals, self.conditions, self.record_id = query.equals, tuple(query.conditions), record_id
        self.owner = f"user:{context.user.id}" if context.user is not None else f"guest:{context.extras.get('address')}"
        self.token_id: str | None = getattr(context.user, "_token_id", None) if context.user is not None else None
        self._max_queue = int(app.settings.number("live", "max_queue"))
        self._max_sent = int(app.settings.number("live", "max_sent_ids"))
        self._queue: deque[Event] = deque()
        self._arrived = _Signal()
        self.own: OrderedDict[str, tuple[int, bool]] = OrderedDict()   # its own judgements (views.py)
        self.joined_at = 0                                     # the view's changes before it joined
        self._view: "View | None" = None
        self._pending: list[Event] | None = None               # live events held while catching up
        self._sink: Sink | None = None                         # the door's direct writer, once attached
        self.ended: FeedEnded | None = None
        self.viewer = verdicts.viewer(context)
        self.view = verdicts.view_key(self)   # subscribers with the same view share each change's judgement

    # -- what the door reads ------------------------------------------------------------------
    async def next(self, timeout: float | None = None) -> Event | None:
        """The next event, or None after `timeout` seconds without one; FeedEnded when it stopped."""
        while not self._queue:
            if self.ended is not None:
                raise self.ended
            self._arrived.clear()
            if not await self._arrived.wait(timeout):
                return None
        if self.ended is not None:
            raise self.ended  # dropped or revoked: what is still queued is not theirs to read
        return self._queue.popleft()

    async def next_batch(self, timeout: float | None = None) -> list[Event]:
        """Every event waiting (at least one), or [] after `timeout` seconds: a door that can send
        them together pays one write for all."""
        first = await self.next(timeout)
        if first is None:
            return []
        batch = [first, *self._queue]
        self._queue.clear()
        return batch

    def close(self) -> None:
        """The subscriber left: wakes a reader still waiting, and frees the subscription's place."""
        self.end(FeedEnded())

    # -- what the feed writes -----------------------------------------------------------------
    def end(self, reason: FeedEnded) -> None:
        if self.ended is None:
            self.ended = reason
            self._arrived.set()
            self.feeds._remove(self)

    def attach(self, sink: Sink) -> None:
        """Events go straight to `sink` from now on, written by the feed's own loop over its
        subscribers, while none wait in the queue: the door's task is not woken for each one.
        `sink(events)` says False when it cannot take them now (its connection is backed up, or the
        door is still sending what it took): they are queued, bounded, and the door sends them."""
        self._sink = sink

    def offer(self, events: list[Event]) -> None:
        """The events of one batch of changes, in order, for this subscriber."""
        if not events:
            return
        if self._pending is not None:
            self._pending.extend(events)
            return
        if not self._queue and self._sink is not None and self._sink(events):
            return
        for event in events:
            if len(self._queue) >= self._max_queue:
                self.end(ConsumerTooSlow())
                return
            self._queue.append(event)
        self._arrived.set()

    def wants(self, document: dict[str, Any] | None) -> bool:
        return document is not None and (self.record_id is None or document.get("id") == self.record_id) \
            and audience.matches(self.equals, document) and satisfies(self.conditions, document)

    def sees(self, document: dict[str, Any]) -> bool:
        """Whether this subscriber's view holds `document` (filters, scope, `show`)."""
        return self.wants(document) and visibility_of(self.feeds.app, self.resource, self.context.user).admits(document)

    async def judge(self, change: Change, shared: dict[Any, Any]) -> Event | None:
        """This change as this subscriber may see it (None: nothing for them)."""
        return self.receive(change, await verdicts.judge(self, change, shared), shared)

    def receive(self, change: Change, verdict: verdicts.Verdict, shared: dict[Any, Any]) -> Event | None:
        """The event a judgement of this subscriber's view gives them, by what they were sent."""
        return self.pick(change.id, verdicts.outcomes(change, verdict, shared, self.resource))

    def pick(self, id: str, outcomes: dict[bool, Event | None]) -> Event | None:
        """Of a view's outcomes (`verdicts.outcomes`), this subscriber's alone, by whether record `id` was
        sent to it (a catch-up, or a judgement of its own); noted as its own. The feed's fan-out deals a
        change to a whole view instead (service/core/live/views.py)."""
        view = self._view
        event = outcomes[view.was_sent(self, id) if view is not None else self.own.get(id, (0, False))[1]]
        if event is None:
            return None
        self.own[id] = (view.changes if view is not None else 0, event.kind != DELETED)
        self.own.move_to_end(id)
        if len(self.own) > self._max_sent:
            self.own.popitem(last=False)
        if view is not None:
            view.note_own(self)
        return event

    def joined(self, view: "View", changes: int) -> None:
        """It joined `view` after `changes` of its changes were dealt."""
        self._view, self.joined_at = view, changes

    def hold(self) -> None:
        self._pending = []

    async def catch_up(self, token: str) -> None:
        """Replays what happened since `token` (the client's Last-Event-ID), then goes live;
        a token the database cannot resume from gives a `reset` event instead. Live events that
        arrive meanwhile are held (`hold()` was called before the subscriber joined its channel)."""
        replayed: set[str] = set()
        try:
            limit = int(self.feeds.app.settings.number("live", "max_catch_up"))
            changes = await self.feeds.app.db.changes_since(self.resource.collection, token, limit)
        except HistoryLost:
            self._queue.append(Event(RESET, None, None, None))
        else:
            views: dict[Any, Any] = {}
            for change in changes:
                replayed.add(change.token)
                event = await self.judge(change, views)
                if event is not None:
                    self._queue.append(event)
        held, self._pending = self._pending, None
        self.offer([event for event in held or () if event.token not in replayed])
        self._arrived.set()
