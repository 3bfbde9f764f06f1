"""Live feeds: the changes of a repository's records, judged for each subscriber by the read rules.

The database is the bus: every process watches the collections its subscribers follow (one
change stream per collection, in storage), so a write made by any process reaches them all.
For each change and each view (subscribers with the same user, record id and filters; see
service/core/live/verdicts.py), once: only a record within the view's filters and scope that
`show()` allows is sent, serialized as show gives it to them. An update that takes a record out of
a subscriber's view is a `deleted` for them, one that brings it in a `created`, judged on the
record before the update (a pre-image) or, without one, on the ids already sent to them; a
delete reaches only those who could see the record, so ids never leak. Each front door (SSE,
GraphQL) only formats events, once per event and selection.

    LiveUnavailable (service.core.kernel.errors)   the database has no change streams
    FeedEnded -> ConsumerTooSlow | AccessRevoked   why a subscription stopped (service.core.live.subscription)
"""
import asyncio
import weakref
from datetime import datetime, timezone
from typing import Any

from service.core.declarations import READ, Context, Restify
from service.core.kernel import LiveUnavailable, TooManyRequests, refuse, relation_conditions
from service.core.live import verdicts
from service.core.live.subscription import AccessRevoked, Subscription
from service.core.live.views import Outbox, View
from service.core.operations import TOKENS, enter
from service.core.reading import index_query
from storage import Change, ChangesUnsupported


class _Channel:
    """The subscribers of one collection, fed by its one watcher, in views that see changes alike."""

    def __init__(self, max_known: int) -> None:
        self.subscribers: set[Subscription] = set()
        self._views: dict[str, View] = {}
        self._max_known = max_known

    def add(self, subscription: Subscription) -> None:
        self.subscribers.add(subscription)
        view = self._views.get(subscription.view)
        if view is None:
            view = self._views[subscription.view] = View(self._max_known)
        view.add(subscription)

    def discard(self, subscription: Subscription) -> None:
        self.subscribers.discard(subscription)
        view = self._views.get(subscription.view)
        if view is not None:
            view.discard(subscription)
            if not view.members:
                del self._views[subscription.view]

    async def __call__(self, changes: list[Change]) -> None:
        # Every change of the batch is judged first (judging may wait on the database), then dealt
        # without a pause: a subscriber wakes once per batch, and sends it in one write.
        judged = []
        for change in changes:
            shared: dict[Any, Any] = {}
            for view in list(self._views.values()):
                if view.members:
                    judged.append((change, view, await verdicts.judge(view.first, change, shared), shared))
        outbox = Outbox()
        for change, view, verdict, shared in judged:
            view.deal(change.id, verdicts.outcomes(change, verdict, shared, view.first.resource), outbox)
        outbox.send()


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
        return self.app.watcher(collection)

    def admit(self, name: str, context: Context) -> Subscription:
        """The subscription `subscribe` would make, checked as it checks it (the repository, its filters,
        the subscriber's limit) but holding nothing: what a feed's HEAD answers by."""
        resource = enter(self.app, name, context, READ)
        query = index_query(resource, resource.fields(context), context, self.app.settings)
        for through in relation_conditions(query.conditions):
            # Whether a record matches depends on other records, which may change without it.
            refuse(through.label or through.relation, f"A live feed cannot filter through the relation "
                   f"{through.relation!r}: one changed record cannot tell whether it still matches.")
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
        channel = self._channels.get(subscription.resource.collection)
        if channel is None:
            max_known = int(self.app.settings.number("live", "max_sent_ids"))
            channel = self._channels[subscription.resource.collection] = _Channel(max_known)
        channel.add(subscription)
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
        await self._watcher(TOKENS).listen(self._on_tokens)
        stored = await self.app.db.collection(TOKENS).find_by_id(subscription.token_id)
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
        channel.discard(subscription)
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
                self._watcher(TOKENS).forget(self._on_tokens)

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
