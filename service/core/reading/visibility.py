"""Which records of a repository a user may see: the one read rule, composed once.

A record is visible when the repository's policy lets the user in (`allow_restify`), its read rule
(`scope()`) lets the record through — inside the query, so what is hidden is neither listed,
counted nor told apart from what does not exist — and then `show(user, record)` allows it.

Every read takes it: index pages, totals and the records an index action selects; single records
(show, update, delete, attach, actions, getters); the records bulk writes, relation changes and
getters name by id; relation loads; `exists:` checks; the parents a relation search or sort reads;
and, tested in the process (`admits`), the changes a live feed delivers.

    seen = visibility_of(app, resource, context.user)
    where = seen.within(Filter(equals=...))     # the scope inside the query
    rows = seen.shown(await collection.find(where))
"""
from collections.abc import Iterable
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from service.core.declarations import Gate, Model, admits
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Resource, Restify


class Visible:
    """One user's view of one repository, for one request: `allow_restify` is asked once, the scope
    compiled once (when first needed), and `show` once per record."""

    def __init__(self, app: "Restify", resource: "Resource", user: Model | None) -> None:
        self.app, self.resource, self.user = app, resource, user
        self.gate: Gate = app.registry.policies.gate(resource.model, user)

    @property
    def entered(self) -> bool:
        """Whether the policy lets the user in at all (`allow_restify`): if not, nothing is visible."""
        return self.gate.entered

    @cached_property
    def scope(self) -> tuple[dict[str, Any], ...] | None:
        """The read rule, compiled (`PolicyMap.scope`): None reads everything, () nothing."""
        return self.app.registry.policies.scope(self.resource.model, self.user)

    def within(self, where: Filter | None = None) -> Filter:
        """`where`, narrowed to the records the scope lets the user read."""
        return replace(where if where is not None else Filter(), any_of=self.scope)

    def shows(self, document: dict[str, Any]) -> bool:
        """`show` for a record the scope let through (see `Gate.shows`)."""
        return self.gate.shows(self.resource.model(document))

    def shown(self, documents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The documents `show` allows, in their order."""
        return [document for document in documents if self.shows(document)]

    def admits(self, document: dict[str, Any]) -> bool:
        """For a document no query read (a change stream delivered it): the scope tested in the
        process, as the query would test it, then `show`."""
        return self.entered and admits(self.scope, document) and self.shows(document)

    # -- reads -------------------------------------------------------------------------------------
    async def find_one(self, where: Filter) -> dict[str, Any] | None:
        """The record `where` finds, if the user may see it; None otherwise (hidden or missing alike)."""
        if not self.entered:
            return None
        found = await self.app.collection(self.resource).find_one(self.within(where))
        return found if found is not None and self.shows(found) else None

    async def find(self, id: Any) -> dict[str, Any] | None:
        return await self.find_one(Filter(equals={"id": id}))

    async def find_many(self, ids: Iterable[Any]) -> dict[str, dict[str, Any]]:
        """The records among `ids` the user may see, by id, in one query."""
        if not self.entered:
            return {}
        wanted = [i for i in ids if isinstance(i, str)]
        found = await self.app.collection(self.resource).find_within("id", wanted, where=self.within())
        return {document["id"]: document for document in found if self.shows(document)}


def visibility_of(app: "Restify", resource: "Resource", user: Model | None) -> Visible:
    """What `user` may see of `resource`'s records."""
    return Visible(app, resource, user)
