"""Resolvers: thin adapters from GraphQL arguments to the operations layer.

`RepositoryResolvers` is what `graphql:generate --resolvers` subclasses into
`schema/resolvers/<name>.py`; authors may override any method there. Results are
flattened resource objects: `{"id", **attributes}` plus the loaded relationships,
which relation fields read without another query.
"""
from collections.abc import Sequence
from typing import Any

from graphql import GraphQLResolveInfo

from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.registry import Resource
from service.core.kernel.errors import BadRequest
from service.core.operations import aggregating, attaching, crud as operations, profile, trash
from service.core.reading import cursors
from service.core.reading.fieldsets import SELECTED
from service.core.reading.filter_objects import FILTER
from service.core.reading.query import max_related_depth
from service.graphql.bulk import BulkResolvers
from service.graphql.contexts import request_field_context
from service.graphql.selection import (
    leaf_paths, related_firsts, related_paths, selected_here, selected_names,
)

RELATIONSHIPS = "__relationships"
PLANS = "plans"  # the key, in a request's GraphQL context, of its document's plans
Records = list[dict[str, Any]]  # a list's flattened records (named: the resolvers' `list` hides the builtin)


def flatten(resource_object: dict[str, Any]) -> dict[str, Any]:
    # `version` first: an attribute of that name is what the type's field of that name shows.
    flat = {"id": resource_object["id"], "version": resource_object.get("meta", {}).get("version"),
            **resource_object.get("attributes", {})}
    flat[RELATIONSHIPS] = resource_object.get("relationships", {})
    return flat


def relation_resolver(name: str, single: bool) -> Any:
    """A relation field: the related records loaded with its parent. Each place one is written is
    charged to the answer's budget (the records were built once, and aliases write them again)."""
    def resolve(parent: dict[str, Any], info: GraphQLResolveInfo, first: int | None = None) -> Any:
        items = relation_items(parent.get(RELATIONSHIPS, {}), name, single, first)
        budget = info.context["context"].budget
        if budget is not None and items:
            keep = selected_here(info)
            for item in items:
                budget.place(item, keep)
        if single:
            return flatten(items[0]) if items else None
        return [flatten(item) for item in items]
    return resolve


def relation_items(loaded: dict[str, list[dict[str, Any]]], name: str, single: bool,
                   first: int | None) -> list[dict[str, Any]]:
    """What a relation field writes of the related records loaded with its parent (`loaded`, by relation):
    one for a BelongsTo, else the first `first` (all of them when it is None or negative)."""
    items = loaded.get(name, [])
    return items[:1] if single else items[:first] if first is not None and first >= 0 else items


def with_filter(context: Context, given: dict[str, Any] | None) -> Context:
    """The context with a `<Type>Filter` argument, which the operations read as a typed filter object."""
    if given is not None:
        context.extras[FILTER] = given
    return context


def page_cursor(after: str | None, before: str | None) -> str | None:
    """The REST `cursor` of `after` (a nextCursor, or "" for the first page) or `before` (a prevCursor):
    a cursor carries its direction, so both are the one parameter; a cursor of the other kind is a 400."""
    if after is not None and before is not None:
        raise _bad_cursor("after", "Give after or before, not both.")
    if after is not None and cursors.reads_forward(after) is False:
        raise _bad_cursor("after", "after takes a nextCursor; pass a prevCursor to before.")
    if before is not None and cursors.reads_forward(before) is not False:
        raise _bad_cursor("before", "before takes a prevCursor; pass a nextCursor (or \"\") to after.")
    return after if after is not None else before


def _lower(value: str | None) -> str | None:
    """An enum argument's name (`WITH`) as the operations read it (`with`)."""
    return value.lower() if value is not None else None


def _bad_cursor(name: str, message: str) -> BadRequest:
    return BadRequest(message, {name: [message]})


class RepositoryResolvers(BulkResolvers):
    resource: str = ""  # the repository served, set on each instance

    def __init__(self, app: Restify) -> None:
        self.app = app

    # -- helpers ------------------------------------------------------------
    def _resource(self) -> Resource:
        return self.app.resource(self.resource)

    def context(self, info: GraphQLResolveInfo, **params: Any) -> Context:
        related, selected = self._plan(info)
        return self._context(info.context["context"], related, selected, **params)

    @staticmethod
    def _context(base: Context, related: str, selected: dict[str, frozenset[str]], shows_page_meta: bool = True,
                 **params: Any) -> Context:
        values = {k: str(v) for k, v in params.items() if v is not None}
        if related:
            values["related"] = related
        return request_field_context(base, values, {SELECTED: selected}, budget=base.budget,
                                     shows_page_meta=shows_page_meta)

    def _plan(self, info: GraphQLResolveInfo) -> tuple[str, dict[str, frozenset[str]]]:
        """The relations this field loads and the fields it selects per type: worked out from the
        document once, then kept with it (the document's nodes and fragments never change; the key
        holds the repository, so a reloaded registry plans again)."""
        resource, depth = self._resource(), max_related_depth(self.app.settings)
        plans = info.context.get(PLANS)
        key = (id(info.field_nodes[0]), len(info.field_nodes), id(resource), depth)
        planned = plans.get(key) if plans is not None else None
        if planned is None or planned[0] is not resource:
            planned = (resource, leaf_paths(related_paths(resource, info, depth=depth + 1)),
                       selected_names(resource, info, depth + 1))
            if plans is not None:
                plans[key] = planned
        return planned[1], planned[2]

    # -- operations ---------------------------------------------------------
    def _relatable(self, info: GraphQLResolveInfo) -> int:
        # The largest `first` asked of a relation, so no selection gets fewer items than it asked for.
        return self.relatable(related_firsts(self._resource(), info))

    def relatable(self, firsts: Sequence[int] = ()) -> int:
        """The related records loaded per relation where the selection asks for `firsts` of some."""
        return max([int(self.app.settings.positive("pagination", "relatable_per_page")), *firsts])

    async def show(self, info: GraphQLResolveInfo, id: str, trashed: str | None = None) -> dict[str, Any]:
        related, selected = self._plan(info)
        return await self.shown(info.context["context"], related, selected, self._relatable(info), id, trashed)

    async def shown(self, base: Context, related: str, selected: dict[str, frozenset[str]], relatable: int, id: str,
                    trashed: str | None = None) -> dict[str, Any]:
        """`show` for the request's context `base` (as `listed` is `list`'s): with the relations it loads, the
        fields it selects and the related records it loads per relation (`relatable`)."""
        context = self._context(base, related, selected, relatablePerPage=relatable, trashed=_lower(trashed))
        body = await operations.show(self.app, self.resource, id, context)
        return flatten(body["data"])

    async def me(self, info: GraphQLResolveInfo) -> dict[str, Any]:
        """The profile, on the user repository's resolvers: the same operation as GET /profile."""
        return flatten(await profile.show(self.app, self.context(info, relatablePerPage=self._relatable(info))))

    async def list(self, info: GraphQLResolveInfo, first: int | None = None, page: int = 1, search: str | None = None,
                   sort: str | None = None, filter: dict[str, Any] | None = None,
                   trashed: str | None = None) -> Records:
        related, selected = self._plan(info)
        return await self.listed(info.context["context"], related, selected, first=first, page=page, search=search,
                                 sort=sort, filter=filter, trashed=trashed)

    async def listed(self, base: Context, related: str, selected: dict[str, frozenset[str]], first: int | None = None,
                     page: int = 1, search: str | None = None, sort: str | None = None,
                     filter: dict[str, Any] | None = None, trashed: str | None = None, flat: bool = False) -> Records:
        """`list` for the request's context `base`, with the relations it loads and the fields it selects
        (what `_plan` works out from the document): the GraphQL door's direct lists call it too, with
        `flat`: records that load no relations are written on one level straight from the stored documents."""
        # A list shows no total, cursors or links: what they would cost is not spent (`<type>Page` shows them).
        context = self._context(base, related, selected, False, perPage=first, page=page, search=search, sort=sort,
                                trashed=_lower(trashed), count="none")
        context.flat_records = flat  # the index clears it if it loads relations after all
        body = await operations.index(self.app, self.resource, with_filter(context, filter))
        if context.flat_records:
            return body["data"]
        return [flatten(item) for item in body["data"]]

    async def paginate(self, info: GraphQLResolveInfo, first: int | None = None, page: int = 1,
                       after: str | None = None, before: str | None = None, search: str | None = None,
                       sort: str | None = None, filter: dict[str, Any] | None = None,
                       count: str = "EXACT", trashed: str | None = None) -> dict[str, Any]:
        """`<type>Page`: the list with the REST index's meta; `after`/`before` are its cursor."""
        context = self.context(info, perPage=first, page=page, cursor=page_cursor(after, before), search=search,
                               sort=sort, count=count.lower(), trashed=_lower(trashed))
        body = await operations.index(self.app, self.resource, with_filter(context, filter))
        meta = body["meta"]
        return {"data": [flatten(item) for item in body["data"]],
                "meta": {"total": meta["total"], "currentPage": meta["current_page"], "lastPage": meta["last_page"],
                         "perPage": meta["per_page"], "nextCursor": meta["next_cursor"],
                         "prevCursor": meta["prev_cursor"]}}

    async def aggregate(self, info: GraphQLResolveInfo, group: str | None = None, metrics: str | None = None,
                        sort: str | None = None, search: str | None = None,
                        filter: dict[str, Any] | None = None, trashed: str | None = None) -> dict[str, Any]:
        """`<type>Aggregate`: REST's `<r>/aggregate`, whose answer has the shape the types give it."""
        context = self.context(info, group=group, metrics=metrics, sort=sort, search=search, trashed=_lower(trashed))
        return await aggregating.aggregate(self.app, self.resource, with_filter(context, filter))

    async def create(self, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
        body = await operations.store(self.app, self.resource, dict(input), self.context(info))
        return await self._reloaded(info, body["data"])

    async def update(self, info: GraphQLResolveInfo, id: str, input: dict[str, Any],
                     version: int | None = None) -> dict[str, Any]:
        body = await operations.update(self.app, self.resource, id, dict(input), self.context(info), partial=True,
                                       versions=operations.expected_versions(version))
        return await self._reloaded(info, body["data"])

    async def delete(self, info: GraphQLResolveInfo, id: str, version: int | None = None,
                     force: bool | None = None) -> bool:
        """Trashes the record of a repository with soft deletes, unless `force`."""
        await operations.delete(self.app, self.resource, id, self.context(info, force="true" if force else None),
                                versions=operations.expected_versions(version))
        return True

    async def restore(self, info: GraphQLResolveInfo, id: str, version: int | None = None) -> dict[str, Any]:
        body = await trash.restore(self.app, self.resource, id, self.context(info),
                                   versions=operations.expected_versions(version))
        return await self._reloaded(info, body["data"])

    async def change_relation(self, info: GraphQLResolveInfo, operation: str, relation: str, id: str,
                              ids: Sequence[str], version: int | None = None) -> dict[str, Any]:
        """attach / detach / sync: the answer already carries the relations the selection asks for."""
        body = await attaching.change(self.app, self.resource, id, operation, relation, {relation: list(ids)},
                                      self.context(info, relatablePerPage=self._relatable(info)),
                                      versions=operations.expected_versions(version))
        return flatten(body["data"])

    async def _reloaded(self, info: GraphQLResolveInfo, data: dict[str, Any]) -> dict[str, Any]:
        """A mutation's result with its selected relations (loaded through show, like any read)."""
        if not related_paths(self._resource(), info):
            return flatten(data)
        return await self.show(info, data["id"])
