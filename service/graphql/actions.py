"""Actions and getters in the GraphQL schema: per repository of model `<Type>` that declares some,

    mutation run<Type>Action(action: String!, ids: [ID!], all: Boolean, filter: <Type>Filter, search: String,
                             id: ID, payload: JSON, version: Int): JSON
    query    <type>Getter(key: String!, id: ID): JSON

One generic field each rather than one per action: the schema stays the same when an action is
added, and the answers (whatever `handle` returns) are JSON anyway. `ids` or `all` run an action
offered on the collection (`all`: every record the caller may see that `filter` and `search` select, as
on `<type>List`); `id` (with `version`, the
record's meta.version as read) runs one offered on a record. The resolvers call the same
operations as REST, so policies, validation and the answers are the same.
"""
from collections.abc import Callable, Mapping
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLField, GraphQLID, GraphQLInputObjectType, GraphQLInt, GraphQLList,
    GraphQLNonNull,
    GraphQLResolveInfo, GraphQLSchema, GraphQLString,
)

from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.registry import Resource
from service.core.kernel.errors import BadRequest
from service.core.operations import actions, getters
from service.core.reading.filter_objects import FILTER
from service.core.writing.writes import expected_versions
from service.graphql.scalars import GraphQLJSON
from service.graphql.contexts import field_context

_PLAIN = Context(door="console", action="schema")  # what `actions(context)` sees while the schema is built


def _names(resource: Resource) -> tuple[str, str]:
    type_name = resource.model.__name__
    return f"run{type_name}Action", f"{type_name[:1].lower()}{type_name[1:]}Getter"


def schema_fields(resources: list[Resource], filters: Mapping[str, GraphQLInputObjectType | None]
                  ) -> tuple[dict[str, GraphQLField], dict[str, GraphQLField]]:
    """(mutations, queries): `run<Type>Action` and `<type>Getter` for the repositories that declare any;
    `filters`: each repository's `<Type>Filter` (None: it has no matchable fields)."""
    mutations: dict[str, GraphQLField] = {}
    queries: dict[str, GraphQLField] = {}
    for resource in resources:
        run_name, getter_name = _names(resource)
        if actions.available(resource, _PLAIN, False) or actions.available(resource, _PLAIN, True):
            mutations[run_name] = GraphQLField(GraphQLJSON, {
                "action": GraphQLArgument(GraphQLNonNull(GraphQLString)),
                "ids": GraphQLArgument(GraphQLList(GraphQLNonNull(GraphQLID))),
                "all": GraphQLArgument(GraphQLBoolean),
                **({"filter": GraphQLArgument(found)} if (found := filters.get(resource.name)) else {}),
                "search": GraphQLArgument(GraphQLString),  # with all: as on <type>List
                "id": GraphQLArgument(GraphQLID),
                "payload": GraphQLArgument(GraphQLJSON),
                "version": GraphQLArgument(GraphQLInt),  # with id: the version read (If-Match)
            })
        if resource.repository.getters(_PLAIN):
            queries[getter_name] = GraphQLField(GraphQLJSON, {
                "key": GraphQLArgument(GraphQLNonNull(GraphQLString)), "id": GraphQLArgument(GraphQLID),
            })
    return mutations, queries


def _runner(app: Restify, name: str) -> Callable[..., Any]:
    async def run(_: Any, info: GraphQLResolveInfo, action: str, ids: list[str] | None = None,
                  all: bool | None = None, id: str | None = None, payload: Any = None,
                  version: int | None = None, filter: dict[str, Any] | None = None, search: str | None = None) -> Any:
        if payload is not None and not isinstance(payload, dict):
            raise BadRequest("The payload must be an object of the action's fields.")
        body = dict(payload or {})
        if all:
            body[actions.SELECTION] = actions.ALL
        elif ids is not None:
            body[actions.SELECTION] = ids
        # `all` selects as the index does: the same search parameter and typed filter object.
        context = field_context(info, {"search": search} if search else {}, {FILTER: filter} if filter else {})
        answer = await actions.run(app, name, action, body, context, id, expected_versions(version))
        return answer["data"]
    return run


def _getter(app: Restify, name: str) -> Callable[..., Any]:
    async def get(_: Any, info: GraphQLResolveInfo, key: str, id: str | None = None) -> Any:
        return (await getters.run(app, name, key, field_context(info), id))["data"]
    return get


def bind(app: Restify, schema: GraphQLSchema, resources: list[Resource]) -> None:
    """Sets the resolvers of the `run<Type>Action` and `<type>Getter` fields the schema has."""
    for resource in resources:
        run_name, getter_name = _names(resource)
        for owner, field_name, resolver in ((schema.mutation_type, run_name, _runner),
                                            (schema.query_type, getter_name, _getter)):
            if owner is not None and field_name in owner.fields:
                owner.fields[field_name].resolve = resolver(app, resource.name)
