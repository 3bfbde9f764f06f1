"""One view's judgement of one change, shared by every subscriber with that view.

A view is what decides what a subscriber is sent: the user (their scope, `show`, the fields they
may see), the record id and the index filters they subscribed with. Subscribers with the same view
share the judgement (is the record in view before and after the change, and as what body) and the
event made of it; each one's own "was sent" state then picks the event kind.

Leaving and entering a view are judged on the record before the change: the change stream's
pre-image, else the image this process's write replaced (storage/pre_images.py), else, for a
soft delete, the trashed record without its stamp. Without any, a record never sent on the stream
that leaves the view says nothing, and one that enters it is an `updated`.
"""
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from service.core.declarations import DELETED_AT, Context, Resource
from service.core.live import audience
from service.core.live.events import CREATED, DELETED, UPDATED, Event
from service.core.writing import RESTORED, TRASHED, trash_change
from storage import Change

if TYPE_CHECKING:
    from service.core.live.subscription import Subscription


@dataclass(frozen=True)
class Verdict:
    now: dict[str, Any] | None   # the record as the view shows it after the change (None: not in view)
    before: bool | None          # whether it was in view before the change (None: not known)


def viewer(context: Context) -> str:
    """Whose rules a subscriber sees by: a user's, or a guest's (every guest sees alike)."""
    return f"user:{context.user.id}" if context.user is not None else "guest"


def view_key(subscription: "Subscription") -> str:
    """Subscribers with equal keys see every change alike."""
    return repr((subscription.resource.name, subscription.viewer, subscription.record_id,
                 sorted(subscription.equals.items(), key=lambda item: item[0]), subscription.conditions))


def _prior(change: Change) -> dict[str, Any] | None:
    if change.operation == "delete":
        return change.document
    if change.before is not None:
        return change.before
    if change.operation == "update" and trash_change(change.document) == TRASHED:
        return {k: v for k, v in (change.document or {}).items() if k != DELETED_AT}
    return None


async def judge(subscription: "Subscription", change: Change, shared: dict[Any, Any]) -> Verdict:
    """The change as `subscription`'s view sees it; `shared` keeps what one change's judgements
    have in common (a user's presentation of the record, the events made)."""
    prior = _prior(change)
    before = None if prior is None else subscription.sees(prior)
    if change.operation == "delete" or not subscription.wants(change.document):
        return Verdict(None, before)
    key = ("view", subscription.resource.name, subscription.viewer, change.token)
    if key not in shared:
        assert change.document is not None  # wanted, so there is one
        app = shared.get("app") or shared.setdefault("app", subscription.feeds.app.pinned())  # one registry per change
        shown = await audience.present(app, subscription.resource, subscription.context, change.document)
        # Users shown the same record share it, and so its event, frame and GraphQL results.
        shared[key] = shown if shown is None else shared.setdefault(("shown", _spelling(shown)), shown)
    return Verdict(shared[key], before)


def _spelling(shown: dict[str, Any]) -> Any:
    """What tells two presentations apart: their JSON (repr where orjson refuses a value)."""
    try:
        return orjson.dumps(shown)
    except TypeError:
        return repr(shown)


def kind_for(change: Change, verdict: Verdict, known: bool) -> str | None:
    """What the change is to a subscriber who was (`known`) or was not sent the record as in view."""
    if change.operation == "delete":
        return DELETED if (verdict.before if verdict.before is not None else known) else None
    if verdict.now is not None:
        if change.operation == "insert" or trash_change(change.document) == RESTORED:
            return CREATED
        return CREATED if verdict.before is False and not known else UPDATED
    return DELETED if known or verdict.before else None


def outcomes(change: Change, verdict: Verdict, shared: dict[Any, Any], resource: Resource) -> dict[bool, Event | None]:
    """The event for a subscriber of the view who was (True) or was not (False) sent the record: worked
    out once per view, so each subscriber only looks up which one is theirs."""
    found = {}
    for known in (False, True):
        kind = kind_for(change, verdict, known)
        found[known] = None if kind is None else event(change, verdict, kind, shared, resource)
    return found


def event(change: Change, verdict: Verdict, kind: str, shared: dict[Any, Any], resource: Resource) -> Event:
    """The one event of this kind for everyone shown the same body."""
    body = verdict.now if kind != DELETED else None
    key = ("event", kind, resource.name, id(body))
    if key not in shared:
        shown = body if body is not None else audience.gone(resource, change.id)
        shared[key] = Event(kind, change.id, change.token, shown)
    found: Event = shared[key]
    return found
