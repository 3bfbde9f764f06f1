"""One subscriber's view of one repository's changes: what is sent to them, and why it stops.

    FeedEnded -> ConsumerTooSlow | AccessRevoked   why a subscription stopped
"""
import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.core.declarations import DELETED_AT, Context, Resource
from service.core.kernel import satisfies
from service.core.live import audience
from service.core.reading import IndexQuery, visibility_of
from service.core.writing import RESTORED, TRASHED, trash_change
from storage import Change, HistoryLost

if TYPE_CHECKING:
    from service.core.live.feeds import Feeds

CREATED, UPDATED, DELETED, RESET = "created", "updated", "deleted", "reset"
_KINDS = {"insert": CREATED, "update": UPDATED}


class FeedEnded(Exception):
    message = "The feed ended."
    code = "FEED_ENDED"


class ConsumerTooSlow(FeedEnded):
    message = "The subscriber did not keep up with the changes and was dropped."
    code = "TOO_SLOW"


class AccessRevoked(FeedEnded):
    message = "The token of this subscription was revoked or has expired."
    code = "UNAUTHENTICATED"


@dataclass(frozen=True)
class Event:
    kind: str                     # created | updated | deleted | reset
    id: str | None
    token: str | None             # where a client resumes from (SSE `id:`)
    body: dict[str, Any] | None   # {"data": resource}; deleted: {"data": {"id", "type"}}


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
        self._arrived = asyncio.Event()
        self._sent: OrderedDict[str, None] = OrderedDict()   # ids this subscriber may know, oldest first
        self._pending: list[Event] | None = None               # live events held while catching up
        self.ended: FeedEnded | None = None

    # -- what the door reads ------------------------------------------------------------------
    async def next(self, timeout: float | None = None) -> Event | None:
        """The next event, or None after `timeout` seconds without one; FeedEnded when it stopped."""
        while not self._queue:
            if self.ended is not None:
                raise self.ended
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), timeout)
            except asyncio.TimeoutError:
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

    def offer(self, event: Event) -> None:
        if self._pending is not None:
            self._pending.append(event)
        elif len(self._queue) >= self._max_queue:
            self.end(ConsumerTooSlow())
        else:
            self._queue.append(event)
            self._arrived.set()

    def wants(self, document: dict[str, Any] | None) -> bool:
        return document is not None and (self.record_id is None or document.get("id") == self.record_id) \
            and audience.matches(self.equals, document) and satisfies(self.conditions, document)

    def _remember(self, id: str) -> None:
        self._sent[id] = None
        self._sent.move_to_end(id)
        if len(self._sent) > self._max_sent:
            self._sent.popitem(last=False)

    async def judge(self, change: Change, views: dict[Any, Any]) -> Event | None:
        """This change as this subscriber may see it (None: nothing for them). `views` caches
        what a user may see of one change, shared by every subscriber of that user."""
        deleted = Event(DELETED, change.id, change.token, audience.gone(self.resource, change.id))
        if change.operation == "delete":
            known = self.wants(change.document) and await self._view(change, views) is not None \
                if change.document is not None else change.id in self._sent
            self._sent.pop(change.id, None)
            return deleted if known else None
        body = await self._view(change, views) if self.wants(change.document) else None
        if body is not None:
            self._remember(change.id)
            restored = change.operation == "update" and trash_change(change.document) == RESTORED
            return Event(CREATED if restored else _KINDS[change.operation], change.id, change.token, body)
        if change.id in self._sent or self._saw_trashed(change):
            self._sent.pop(change.id, None)
            return deleted  # it left this subscriber's view
        return None

    def _saw_trashed(self, change: Change) -> bool:
        """Whether `change` trashed a record this subscriber could see until then (soft deletes)."""
        if change.operation != "update" or trash_change(change.document) != TRASHED:
            return False
        before = {k: v for k, v in (change.document or {}).items() if k != DELETED_AT}
        return self.wants(before) and visibility_of(self.feeds.app, self.resource, self.context.user).admits(before)

    async def _view(self, change: Change, views: dict[Any, Any]) -> dict[str, Any] | None:
        key = (self.resource.name, self.owner, change.token)
        if key not in views:
            assert change.document is not None  # viewed only when `wants` took the document
            views[key] = await audience.present(self.feeds.app, self.resource, self.context, change.document)
        return views[key]

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
        for event in held or ():
            if event.token not in replayed:
                self.offer(event)
        self._arrived.set()
