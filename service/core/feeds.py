"""Live feeds: the changes of a repository's records, judged for each subscriber by the read rules.

The database is the bus: every process watches the collections its subscribers follow (one
change stream per collection, in storage), so a write made by any process reaches them all.
For each change and each subscriber: only a record within the subscriber's filters and scope
that `show()` allows is sent, serialized as show gives it to them; an update that takes a
record they received out of their view is a `deleted` for them; a delete reaches only those
who could see the record (on the pre-delete image when the server gives one, else on the ids
already sent to them), so ids never leak. Each front door (SSE, GraphQL) only formats events.

    LiveUnavailable (service.core.errors)   the database has no change streams
    FeedEnded -> ConsumerTooSlow | AccessRevoked   why a subscription stopped
"""
import asyncio
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from service.core import audience, auth
from service.core.app import Restify
from service.core.context import Context
from service.core.errors import LiveUnavailable, TooManyRequests
from service.core.filter_objects import index_query
from service.core.matching import satisfies
from service.core.operations import enter
from service.core.query import IndexQuery
from service.core.registry import Resource
from storage import Change, ChangesUnsupported, HistoryLost

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
            return Event(_KINDS[change.operation], change.id, change.token, body)
        if change.id in self._sent:
            del self._sent[change.id]
            return deleted  # it left this subscriber's view
        return None

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


class _Channel:
    """The subscribers of one collection, fed by its one watcher."""

    def __init__(self) -> None:
        self.subscribers: set[Subscription] = set()

    async def __call__(self, changes: list[Change]) -> None:
        for change in changes:
            views: dict[Any, Any] = {}
            for subscriber in list(self.subscribers):
                event = await subscriber.judge(change, views)
                if event is not None:
                    subscriber.offer(event)


class Feeds:
    """Every live subscription of one application in this process."""

    def __init__(self, app: Restify) -> None:
        self._app = weakref.ref(app)  # held weakly: the feeds live as long as their application
        self._channels: dict[str, _Channel] = {}
        self._by_owner: dict[str, int] = {}
        self._by_token: dict[str, set[Subscription]] = {}
        self._expiries: dict[Subscription, asyncio.TimerHandle] = {}

    @property
    def app(self) -> Restify:
        app = self._app()
        if app is None:  # pragma: no cover - a subscription outlived its application
            raise RuntimeError("the application of these feeds is gone")
        return app

    def _watcher(self, collection: str) -> Any:
        idle = float(self.app.settings.number("live", "idle_ms")) / 1000
        return self.app.db.watcher(collection, idle, bool(self.app.settings.value("live", "pre_images")))

    def admit(self, name: str, context: Context) -> Subscription:
        """The subscription `subscribe` would make, checked as it checks it (the repository, its filters,
        the subscriber's limit) but holding nothing: what a feed's HEAD answers by."""
        resource = enter(self.app, name, context)
        query = index_query(resource, resource.fields(context), context, self.app.settings)
        subscription = Subscription(self, resource, context, query, context.params.get("id") or None)
        limit = int(self.app.settings.number("live", "max_per_user"))
        if self._by_owner.get(subscription.owner, 0) >= limit:
            raise TooManyRequests(f"Too many live subscriptions (at most {limit} per user).")
        return subscription

    async def subscribe(self, name: str, context: Context, last_event_id: str | None = None) -> Subscription:
        """A subscription to repository `name` for the context's user, with its `id` and the index's
        filters (`context.params`, and a filter object in `context.extras`); live once this returns."""
        subscription = self.admit(name, context)
        self._by_owner[subscription.owner] = self._by_owner.get(subscription.owner, 0) + 1
        if last_event_id:
            subscription.hold()
        channel = self._channels.setdefault(subscription.resource.collection, _Channel())
        channel.subscribers.add(subscription)
        try:
            await self._watcher(subscription.resource.collection).listen(channel)
            if subscription.token_id is not None:
                await self._follow_token(subscription)
            if last_event_id:
                await subscription.catch_up(last_event_id)
        except ChangesUnsupported:
            self._remove(subscription)
            raise LiveUnavailable() from None
        except BaseException:
            self._remove(subscription)
            raise
        return subscription

    async def _follow_token(self, subscription: Subscription) -> None:
        """Ends the subscription when its token is deleted (logout, revocation, on any process)
        or expires."""
        assert subscription.token_id is not None  # followed only for a subscription made with a token
        self._by_token.setdefault(subscription.token_id, set()).add(subscription)
        await self._watcher(auth.TOKENS).listen(self._on_tokens)
        stored = await self.app.db.collection(auth.TOKENS).find_by_id(subscription.token_id)
        expires = (stored or {}).get("expires_at")
        if stored is None:
            subscription.end(AccessRevoked())
        elif expires:
            left = max(0.0, _seconds_until(expires))
            self._expiries[subscription] = asyncio.get_running_loop().call_later(
                left, subscription.end, AccessRevoked())

    async def _on_tokens(self, changes: list[Change]) -> None:
        for change in changes:
            if change.operation == "delete":
                for subscription in list(self._by_token.get(change.id, ())):
                    subscription.end(AccessRevoked())

    def _remove(self, subscription: Subscription) -> None:
        channel = self._channels.get(subscription.resource.collection)
        if channel is None or subscription not in channel.subscribers:
            return
        channel.subscribers.discard(subscription)
        self._by_owner[subscription.owner] -= 1
        if not self._by_owner[subscription.owner]:
            del self._by_owner[subscription.owner]
        if not channel.subscribers:
            self._watcher(subscription.resource.collection).forget(channel)
        timer = self._expiries.pop(subscription, None)
        if timer is not None:
            timer.cancel()
        followers = self._by_token.get(subscription.token_id or "")
        if followers is not None:
            followers.discard(subscription)
            if not followers:
                del self._by_token[subscription.token_id or ""]
            if not self._by_token:
                self._watcher(auth.TOKENS).forget(self._on_tokens)

    def count(self) -> int:
        return sum(len(c.subscribers) for c in self._channels.values())


def _seconds_until(iso_time: str) -> float:
    moment = datetime.fromisoformat(iso_time.replace("Z", "+00:00"))
    return (moment - datetime.now(timezone.utc)).total_seconds()


_FEEDS: "weakref.WeakKeyDictionary[Restify, Feeds]" = weakref.WeakKeyDictionary()


def feeds(app: Restify) -> Feeds:
    """The feeds of `app` in this process (made on first use)."""
    app = app.origin  # one per application, whichever pinned view asks
    if app not in _FEEDS:
        _FEEDS[app] = Feeds(app)
    return _FEEDS[app]
