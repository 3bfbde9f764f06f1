"""Which records of a repository a user may see: the one read rule, composed once.

A record is visible when the repository's policy lets the user in (`allow_restify`), its read rule
(`scope()`) lets the record through — inside the query, so what is hidden is neither listed,
counted nor told apart from what does not exist — and then `show(user, record)` allows it.

Every read takes it: index pages, totals and the records an index action selects; single records
(show, update, delete, attach, actions, getters); the records bulk writes, relation changes and
getters name by id; relation loads; `exists:` checks; the parents a relation search or sort reads;
and, tested in the process (`admits`), the changes a live feed delivers.

A repository with `soft_deletes` keeps its trashed records (those with a `deleted_at`) out of all of
these, here and nowhere else; `trashed="with"` or `"only"` (index and show's `?trashed=`, restore,
a forced delete) lets them in, each shown only when the policy's `view_trashed` (else its `delete`)
allows it for that record.

    seen = visibility_of(app, resource, context.user)
    where = seen.within(Filter(equals=...))     # the scope inside the query
    rows = seen.shown(await collection.find(where))
"""
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from service.core.declarations import DELETED_AT, Gate, Model, admits, to_boolean
from service.core.kernel import BadRequest
from storage import Filter, GroupKey, Metric, among

if TYPE_CHECKING:
    from service.core.declarations import Resource, Restify


TRASHED = ("without", "with", "only")  # which records of a soft-deleting repository a read takes


class Visible:
    """One user's view of one repository, for one request: `allow_restify` is asked once, the scope
    compiled once (when first needed), and `show` once per record."""

    def __init__(self, app: "Restify", resource: "Resource", user: Model | None, trashed: str = "without") -> None:
        self.app, self.resource, self.user = app, resource, user
        self.gate: Gate = app.registry.policies.gate(resource.model, user)
        self.trashed = trashed if resource.soft_deletes else "without"  # no record is trashed

    @property
    def entered(self) -> bool:
        """Whether the policy lets the user in at all (`allow_restify`): if not, nothing is visible."""
        return self.gate.entered

    @cached_property
    def scope(self) -> tuple[dict[str, Any], ...] | None:
        """The read rule, compiled (`PolicyMap.scope`): None reads everything, () nothing."""
        return self.app.registry.policies.scope(self.resource.model, self.user)

    def within(self, where: Filter | None = None) -> Filter:
        """`where`, narrowed to the records the scope lets the user read (and to those not trashed,
        or only the trashed ones)."""
        where = where if where is not None else Filter()
        if where.any_of is not self.scope:  # (a filter without a rule, for a user without one, is kept)
            where = replace(where, any_of=self.scope)
        if self.trashed == "with" or not self.resource.soft_deletes:
            return where
        return replace(where, conditions=(*where.conditions, (DELETED_AT, "null", self.trashed == "without")))

    def shows(self, document: dict[str, Any]) -> bool:
        """`show` for a record the scope let through (see `Gate.shows`); for a trashed one, then
        `view_trashed` (else `delete`)."""
        return self._shows(document, self.resource.model(document))

    def _shows(self, document: dict[str, Any], record: Model) -> bool:
        return self.gate.shows(record) and (self.trashed == "without" or document.get(DELETED_AT) is None
                                            or self.gate.allows_or("view_trashed", "delete", record))

    def taken(self, document: dict[str, Any]) -> bool:
        """Whether the trashed state of `document` is one this view takes (`within`, in the process)."""
        if self.trashed == "with" or not self.resource.soft_deletes:
            return True
        return (document.get(DELETED_AT) is not None) == (self.trashed == "only")

    def shown(self, documents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The documents `show` allows, in their order."""
        return [document for document, _ in self.shown_rows(documents)]

    def shown_rows(self, documents: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], Model]]:
        """(document, record) for each document `show` allows, in their order: the record `show` was
        asked about, for the caller's other questions."""
        model = self.resource.model
        rows = [(document, model(document)) for document in documents]
        if self.trashed != "without":
            return [row for row in rows if self._shows(*row)]
        shows = self.gate.shown_test()  # the policy's method looked up once for a page
        return [row for row in rows if shows(row[1])]

    def admits(self, document: dict[str, Any]) -> bool:
        """For a document no query read (a change stream delivered it): the scope tested in the
        process, as the query would test it, then `show`."""
        return self.entered and self.taken(document) and admits(self.scope, document) and self.shows(document)

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

    async def count_by(self, key: str, values: Iterable[Any]) -> dict[Any, int]:
        """How many records within the read rule have each of `values` as `key`, counted in the database
        (one group by `key`); `show` is not asked, as for index totals."""
        counts = {value: 0 for value in dict.fromkeys(values)}
        among_them = among(key, counts)  # None values left out; None when no value is left
        if among_them is None or not self.entered:
            return counts
        rows = await self.app.collection(self.resource).group(self.within(among_them), [GroupKey(key)],
                                                              [Metric("count")], len(counts))
        for (value,), metrics in rows:
            if value in counts:
                counts[value] = metrics["count"]
        return counts


def trashed_asked(params: Mapping[str, str]) -> str:
    """Which records `?trashed=` asks for: "without" (not sent), "with" or "only"; anything else is a 400."""
    raw = params.get("trashed")
    if raw is None or raw == "":
        return "without"
    if raw not in TRASHED[1:]:
        message = "The trashed parameter must be with or only."
        raise BadRequest(message, {"trashed": [message]})
    return raw


def forced(params: Mapping[str, str]) -> bool:
    """Whether `?force=true` asks a delete to delete a soft-deleting repository's record for good."""
    raw = params.get("force")
    if raw is None or raw == "":
        return False
    flag = to_boolean(raw)
    if flag is None:
        message = "The force parameter must be true or false."
        raise BadRequest(message, {"force": [message]})
    return flag


def visibility_of(app: "Restify", resource: "Resource", user: Model | None, trashed: str = "without") -> Visible:
    """What `user` may see of `resource`'s records (`trashed`: see `TRASHED`)."""
    return Visible(app, resource, user, trashed)
