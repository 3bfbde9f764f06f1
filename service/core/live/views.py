"""Subscribers who see changes alike (a view), and which records each of them was sent.

Whether a subscriber was sent a record decides some events (without a pre-image, a record leaving
the view is a `deleted` only for those it was sent to). Held per subscriber, that knowledge cost a
lookup and an update per subscriber and change. It is held per view instead: after any change that
gives someone an event, either every member was sent the record (they all got it, or an `updated` /
`created` each) or none holds it any more (the ones that had it got a `deleted`). So the view notes,
per record, the change after which all its members held it; a member holds it when it joined before
that change. A member's own judgements (a catch-up after Last-Event-ID) are noted on the member and
count when they are the later.

A batch of changes is dealt to a view's members as one list of events they share, so a door makes
its bytes once for all of them (`Batch.made`); only a change whose event depends on what a member
was sent gives each member a list of its own, from that change to the end of the batch.
"""
from collections import OrderedDict
from typing import TYPE_CHECKING

from service.core.live.events import DELETED, Batch, Event

if TYPE_CHECKING:
    from service.core.live.subscription import Subscription

Outcomes = dict[bool, Event | None]   # the event for a member who was (True) or was not sent the record


class View:
    """The members of one view in one channel, and the records they were sent."""

    def __init__(self, max_known: int) -> None:
        self.members: dict["Subscription", None] = {}   # in the order they joined
        self.changes = 0                                 # changes dealt so far: a member's place in time
        self._held: OrderedDict[str, int] = OrderedDict()   # record id -> the change after which all held it
        self._max_known = max_known
        self._personal: set["Subscription"] = set()    # members with judgements of their own

    @property
    def first(self) -> "Subscription":
        return next(iter(self.members))

    def add(self, member: "Subscription") -> None:
        self.members[member] = None
        member.joined(self, self.changes)

    def discard(self, member: "Subscription") -> None:
        self.members.pop(member, None)
        self._personal.discard(member)

    def was_sent(self, member: "Subscription", id: str) -> bool:
        """Whether `member` holds record `id`: the view's note, or its own if that is the later."""
        own = member.own.get(id) if member.own else None
        after = self._held.get(id)
        if own is not None and (after is None or own[0] >= after):
            return own[1]
        return after is not None and after > member.joined_at

    def note_own(self, member: "Subscription") -> None:
        self._personal.add(member)

    def deal(self, id: str, outcomes: Outcomes, out: "Outbox") -> None:
        """One change's events for every member: shared while they are the same for all."""
        self.changes += 1
        unknown, known = outcomes[False], outcomes[True]
        given = unknown or known
        if given is None:
            return  # nothing for anyone, and what each holds is as it was
        if unknown is known and not out.split(self):
            out.common(self).append(given)
        else:
            for member, events in out.each(self).items():
                event = outcomes[self.was_sent(member, id)]
                if event is not None:
                    events.append(event)
        self._note(id, given.kind != DELETED)

    def _note(self, id: str, held: bool) -> None:
        """After this change every member holds record `id`, or none does."""
        if held:
            self._held[id] = self.changes
            self._held.move_to_end(id)   # the most recent last: the oldest are forgotten first
            if len(self._held) > self._max_known:
                self._held.popitem(last=False)
            return
        self._held.pop(id, None)
        for member in self._personal:
            member.own.pop(id, None)


class Outbox:
    """The events of one batch of changes, per view (shared by its members) or per member."""

    def __init__(self) -> None:
        self._common: dict[View, Batch] = {}
        self._each: dict[View, dict["Subscription", list[Event]]] = {}

    def split(self, view: View) -> bool:
        return view in self._each

    def common(self, view: View) -> Batch:
        batch = self._common.get(view)
        if batch is None:
            batch = self._common[view] = Batch()
        return batch

    def each(self, view: View) -> dict["Subscription", list[Event]]:
        """A list per member, from the view's shared one so far (made at the first change that needs it)."""
        lists = self._each.get(view)
        if lists is None:
            so_far = self._common.pop(view, ())
            lists = self._each[view] = {member: list(so_far) for member in view.members}
        return lists

    def send(self) -> None:
        """Offers each member its events, in order, at once: one write per member and batch."""
        for view, batch in self._common.items():
            for member in list(view.members):
                if member.ended is None:
                    member.offer(batch)
        for lists in self._each.values():
            for member, events in lists.items():
                if events and member.ended is None:
                    member.offer(events)

