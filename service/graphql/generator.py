"""Builds the GraphQL schema from the repositories, with graphql-core objects.

Per repository of model `<Type>`: `type <Type>`, `input <Type>Input`, the queries `<type>`,
`<type>List` and `<type>Page` (with `<Type>Filter`: service/graphql/index_types.py), `<type>Aggregate`
(service/graphql/aggregating.py), the mutations
`create<Type>`, `update<Type>`, `delete<Type>`, their bulk forms (graphql/bulk.py) (and
`attach<Type><Relation>`, `detach...`, `sync...` per BelongsToMany relation: graphql/attaching.py), the
subscription `<type>Changed`
(service/graphql/subscriptions.py), `run<Type>Action` and `<type>Getter` where it declares actions or
getters (service/graphql/actions.py), and one field per exposed relation; `me` when the user repository
is in the schema, with the user's own tokens (`tokens`, `createToken`, `revokeToken`:
service/graphql/tokens.py) and the account mutations (`forgotPassword`, `resetPassword`,
`resendVerification`: service/graphql/accounts.py). Printed sorted, so the same repositories always give
byte-identical SDL.
"""
import re
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLField, GraphQLFloat, GraphQLID,
    GraphQLInputField, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType,
    GraphQLSchema, GraphQLString, lexicographic_sort_schema, print_schema,
)

from service.core.declarations.context import Context
from service.core.declarations.description import describe
from service.core.declarations.fields import Field
from service.core.declarations.registry import Registry, Resource
from service.core.describing.schemas import BY_POLICY, CURRENT_PASSWORD, asks_current_password
from service.core.kernel.errors import DeclarationError
from service.core.reading.serializer import visible
from service.core.writing.validation import writable
from service.graphql import actions, tokens, trash
from service.graphql.accounts import mutation_fields as account_mutations
from service.graphql.aggregating import aggregate_field
from service.graphql.attaching import mutation_fields as relation_mutations
from service.graphql.bulk import bulk_mutations
from service.graphql.config import GraphQLConfig
from service.graphql.index_types import IndexTypes
from service.graphql.scalars import GraphQLLong
from service.graphql.subscriptions import subscription_fields

SCALARS = {"String": GraphQLString, "Int": GraphQLInt, "Float": GraphQLFloat, "Boolean": GraphQLBoolean,
           "ID": GraphQLID, "Long": GraphQLLong}
_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def console_context() -> Context:
    """What `fields(request)` sees while the schema is generated: no user, no request."""
    return Context(door="console", action="schema")


def exposed(registry: Registry, config: GraphQLConfig) -> list[Resource]:
    return sorted((r for r in registry.resources.values() if config.includes(r.name)), key=lambda r: r.name)


def _scalar(field: Field, config: GraphQLConfig) -> Any:
    kind = describe(field).graphql_kind
    name = config.values["types"].get(kind, "String")
    if name not in SCALARS:
        raise DeclarationError(f"graphql config maps {kind!r} to {name!r}, which is not a built-in scalar")
    return SCALARS[name]


def _check_name(owner: str, name: str) -> str:
    if not _NAME.match(name):
        raise DeclarationError(f"{owner}: {name!r} is not a valid GraphQL name")
    return name


class SchemaBuilder:
    def __init__(self, registry: Registry, config: GraphQLConfig, profile: str | None = None) -> None:
        self.config = config
        self.resources = exposed(registry, config)
        self.profile = profile  # the user repository: its type is what `me` returns
        self.objects: dict[str, GraphQLObjectType] = {}
        self.inputs: dict[str, GraphQLInputObjectType] = {}
        self.first = int(config.get("schema", "default_first"))
        self.index_types = IndexTypes(lambda f: _scalar(f, config), self.first)
        self.filters: dict[str, GraphQLInputObjectType | None] = {}  # `<Type>Filter` by resource name

    def build(self) -> GraphQLSchema:
        shown = frozenset(resource.name for resource in self.resources)
        for resource in self.resources:
            self.objects[resource.name] = self._object_type(resource)
            self.inputs[resource.name] = self._input_type(resource)
            self.filters[resource.name] = self.index_types.record_filter(resource.model.__name__,
                                                                         self._fields(resource), resource, shown)
        query: dict[str, GraphQLField] = {}
        mutation: dict[str, GraphQLField] = {}
        for resource in self.resources:
            type_name = resource.model.__name__
            name = lower_first(type_name)
            obj, data = self.objects[resource.name], GraphQLNonNull(self.inputs[resource.name])
            query[name] = GraphQLField(obj, {"id": GraphQLArgument(GraphQLNonNull(GraphQLID))})
            record_filter = self.filters[resource.name]
            # A page is as long as the repository's `per_page` says (as on REST and MCP), else `default_first`.
            query[f"{name}List"] = GraphQLField(GraphQLNonNull(GraphQLList(GraphQLNonNull(obj))),
                                                self.index_types.list_arguments(record_filter, resource.per_page))
            query[f"{name}Page"] = self.index_types.page_field(type_name, obj, record_filter, resource.per_page)
            aggregate = aggregate_field(type_name, self._fields(resource), lambda f: _scalar(f, self.config),
                                        record_filter)
            if aggregate is not None:
                query[f"{name}Aggregate"] = aggregate
            mutation[f"create{type_name}"] = GraphQLField(GraphQLNonNull(obj), {"input": GraphQLArgument(data)})
            mutation[f"update{type_name}"] = GraphQLField(
                GraphQLNonNull(obj), {"id": GraphQLArgument(GraphQLNonNull(GraphQLID)), "input": GraphQLArgument(data),
                                      "version": GraphQLArgument(GraphQLInt)})  # the version read (If-Match)
            mutation[f"delete{type_name}"] = GraphQLField(
                GraphQLNonNull(GraphQLBoolean), {"id": GraphQLArgument(GraphQLNonNull(GraphQLID)),
                                                 "version": GraphQLArgument(GraphQLInt)})  # the version read (If-Match)
            mutation.update(bulk_mutations(type_name, obj, self.inputs[resource.name]))
            trash.add_fields(resource, name, type_name, obj, query, mutation)
        mutation.update(relation_mutations(self.resources, self.objects))
        action_mutations, getter_queries = actions.schema_fields(self.resources, self.filters)
        mutation.update(action_mutations)
        query.update(getter_queries)
        if self.profile in self.objects:
            query["me"] = GraphQLField(self.objects[self.profile])  # the profile: the token user's own record
            token_queries, token_mutations = tokens.schema_fields()
            query.update(token_queries)
            mutation.update(token_mutations)
            mutation.update(account_mutations())  # forgot and reset a password, resend a verification
        if not query:
            query["_empty"] = GraphQLField(GraphQLBoolean, description="There are no repositories in the schema.")
        subscription = subscription_fields(self.resources, self.objects, self.filters)
        return GraphQLSchema(
            GraphQLObjectType("Query", query),
            GraphQLObjectType("Mutation", mutation) if mutation else None,
            GraphQLObjectType("Subscription", subscription) if subscription else None,
        )

    def _fields(self, resource: Resource) -> list[Field]:
        return [f for f in resource.fields(console_context()) if "graphql" not in f.hidden_doors]

    def _object_type(self, resource: Resource) -> GraphQLObjectType:
        type_name = _check_name(type(resource.repository).__name__, resource.model.__name__)

        def fields() -> dict[str, GraphQLField]:
            members = {"id": GraphQLField(GraphQLNonNull(GraphQLID)),
                       "created_at": GraphQLField(GraphQLString), "updated_at": GraphQLField(GraphQLString),
                       "version": GraphQLField(GraphQLInt)}  # meta.version; null on related records
            for field in visible(self._fields(resource)):
                members[_check_name(type_name, field.name)] = GraphQLField(
                    _scalar(field, self.config), description=BY_POLICY if field.by_policy else None)
            if self.config.get("schema", "relations"):
                members.update(self._relation_fields(resource, members))
            return members

        return GraphQLObjectType(type_name, fields)

    def _relation_fields(self, resource: Resource, taken: dict[str, Any]) -> dict[str, GraphQLField]:
        members: dict[str, GraphQLField] = {}
        for name, relation in resource.relations.items():
            target = self.objects.get(relation.target.name)
            if target is None:
                continue  # the target repository is excluded from the schema
            if name in taken:
                raise DeclarationError(f"{type(resource.repository).__name__}: relation {name!r} "
                                       "has the same name as a field")
            if relation.kind == "belongs_to":
                members[_check_name(resource.model.__name__, name)] = GraphQLField(target)
            else:
                members[_check_name(resource.model.__name__, name)] = GraphQLField(
                    GraphQLNonNull(GraphQLList(GraphQLNonNull(target))),
                    {"first": GraphQLArgument(GraphQLInt, default_value=self.first)})
        return members

    def _input_type(self, resource: Resource) -> GraphQLInputObjectType:
        type_name = f"{resource.model.__name__}Input"
        members = {}
        for f in writable(self._fields(resource)):
            members[f.name] = GraphQLInputField(_scalar(f, self.config))
            if describe(f).confirmed:
                members[f"{f.name}_confirmation"] = GraphQLInputField(_scalar(f, self.config))  # the same value
        if asks_current_password(writable(self._fields(resource)), "update"):
            members[CURRENT_PASSWORD] = GraphQLInputField(GraphQLString)  # read by update<Type> only
        if not members:
            members["_empty"] = GraphQLInputField(GraphQLBoolean)
        return GraphQLInputObjectType(type_name, members)


def build_schema_objects(registry: Registry, config: GraphQLConfig, profile: str | None = None) -> GraphQLSchema:
    """`profile`: the user repository's name (`auth.user_repository`), which adds the `me` query."""
    return SchemaBuilder(registry, config, profile).build()


def render(registry: Registry, config: GraphQLConfig, profile: str | None = None) -> str:
    """The SDL text: sorted, so regeneration is idempotent."""
    return print_schema(lexicographic_sort_schema(build_schema_objects(registry, config, profile))) + "\n"
