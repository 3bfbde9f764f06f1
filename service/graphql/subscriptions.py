"""GraphQL subscriptions: `<type>Changed(id: ID, filter: <Type>Filter): <Type>Change!`.

The schema part is built with the rest of the schema by the generator; the resolvers subscribe
to the same feeds as server-sent events (service/core/live/feeds.py), so each event is judged for
the subscriber by scope, `show` and visible fields exactly as on REST. `filter` is the index's
`<Type>Filter` (service/graphql/index_types.py): the feed tests each changed record with its operators.
"""
from collections.abc import Callable
from functools import partial
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLEnumType, GraphQLField, GraphQLID, GraphQLInputObjectType,
    GraphQLNonNull, GraphQLObjectType, GraphQLResolveInfo, GraphQLSchema,
)

from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.registry import Resource
from service.core.live.feeds import feeds
from service.core.live.events import DELETED, Event
from service.core.live.subscription import Subscription
from service.core.reading.filter_objects import FILTER
from service.graphql.resolvers import flatten
from service.graphql.shared_events import ChangePayload

CHANGE_OPERATION = GraphQLEnumType("ChangeOperation", {"CREATED": "CREATED", "UPDATED": "UPDATED",
                                                       "DELETED": "DELETED"})


def field_name(resource: Resource) -> str:
    type_name = resource.model.__name__
    return f"{type_name[:1].lower()}{type_name[1:]}Changed"


def subscription_fields(resources: list[Resource], objects: dict[str, GraphQLObjectType],
                        filters: dict[str, GraphQLInputObjectType | None]) -> dict[str, GraphQLField]:
    """One `<type>Changed` field per repository, with its `<Type>Change` type; `filters`: each
    repository's `<Type>Filter` (None without matchable fields)."""
    members: dict[str, GraphQLField] = {}
    for resource in resources:
        type_name = resource.model.__name__
        change = GraphQLObjectType(f"{type_name}Change", {
            "operation": GraphQLField(GraphQLNonNull(CHANGE_OPERATION)),
            "id": GraphQLField(GraphQLNonNull(GraphQLID)),
            "record": GraphQLField(objects[resource.name]),  # null for a deleted record
        })
        arguments = {"id": GraphQLArgument(GraphQLID)}
        found = filters.get(resource.name)
        if found is not None:
            arguments["filter"] = GraphQLArgument(found)
        members[field_name(resource)] = GraphQLField(GraphQLNonNull(change), arguments)
    return members


def _subscriber(app: Restify, name: str) -> Callable[..., Any]:
    async def subscribe(_: Any, info: GraphQLResolveInfo, id: str | None = None,
                        filter: dict[str, Any] | None = None) -> Changes:
        base: Context = info.context["context"]
        params = {"id": id} if id is not None else {}
        extras = {**base.extras, FILTER: filter} if filter is not None else base.extras
        context = Context(user=base.user, door="graphql", params=params, base_url=base.base_url, extras=extras)
        # Awaited here, not inside the generator: a refusal is an `error` message at subscribe time.
        subscription = await feeds(app).subscribe(name, context)
        return Changes(subscription)
    return subscribe


class Changes:
    """A subscription's events as the source stream of its executions: each event one `ChangePayload`,
    the same object for every subscriber it goes to. The WebSocket door reads `subscription` itself."""

    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription

    def __aiter__(self) -> "Changes":
        return self

    async def __anext__(self) -> ChangePayload:
        event = await self.subscription.next()
        assert event is not None  # without a timeout, `next` waits for one
        return payload_of(event)

    async def aclose(self) -> None:
        self.subscription.close()


def payload_of(event: Event) -> ChangePayload:
    """The root value of the event's executions, made once for all its subscribers."""
    payload: ChangePayload = event.made("graphql", partial(_payload, event))
    return payload


def _payload(event: Event) -> ChangePayload:
    record = flatten(event.body["data"]) if event.kind != DELETED and event.body is not None else None
    return ChangePayload(operation=event.kind.upper(), id=event.id, record=record)


def bind_subscriptions(app: Restify, schema: GraphQLSchema, resources: list[Resource]) -> None:
    """Sets the subscribe and resolve functions of every `<type>Changed` field the schema has."""
    owner = schema.subscription_type
    if owner is None:
        return
    for resource in resources:
        field = owner.fields.get(field_name(resource))
        if field is not None:
            field.subscribe = _subscriber(app, resource.name)
            field.resolve = lambda payload, info, **_: payload
