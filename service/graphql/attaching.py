"""`attach<Type><Relation>`, `detach<Type><Relation>`, `sync<Type><Relation>(id: ID!, ids: [ID!]!,
version: Int): <Type>!`: one mutation per operation and BelongsToMany relation (its name in PascalCase),
running service/core/operations/attaching.py through the repository's resolvers. The schema part is built
with the rest of the schema (generator.py); `bind` gives the fields their resolvers (executor.py)."""
from typing import Any

from graphql import GraphQLArgument, GraphQLField, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType

from service.core.declarations.registry import Resource
from service.core.kernel.naming import pascal
from service.core.operations.attaching import OPERATIONS, many_relations
from service.graphql.resolvers import RepositoryResolvers


def _mutations(resource: Resource, exposed: set[str]) -> list[tuple[str, str, str]]:
    """(field name, operation, relation) for each relation whose target is in the schema too."""
    type_name = resource.model.__name__
    return [(f"{operation}{type_name}{pascal(name)}", operation, name)
            for name, relation in sorted(many_relations(resource).items()) if relation.target.name in exposed
            for operation in OPERATIONS]


def mutation_fields(resources: list[Resource], objects: dict[str, GraphQLObjectType]) -> dict[str, GraphQLField]:
    fields: dict[str, GraphQLField] = {}
    for resource in resources:
        for field_name, _, _ in _mutations(resource, set(objects)):
            fields[field_name] = GraphQLField(GraphQLNonNull(objects[resource.name]), {
                "id": GraphQLArgument(GraphQLNonNull(GraphQLID)),
                "ids": GraphQLArgument(GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLID)))),
                "version": GraphQLArgument(GraphQLInt)})  # the version read (If-Match)
    return fields


def bind(mutation: GraphQLObjectType | None, resource: Resource, resolvers: RepositoryResolvers,
         exposed: set[str]) -> None:
    """Points each of the repository's relation mutations the schema has at `resolvers.change_relation`."""
    if mutation is None:
        return
    for field_name, operation, relation in _mutations(resource, exposed):
        if field_name in mutation.fields:
            mutation.fields[field_name].resolve = _resolver(resolvers, operation, relation)


def _resolver(resolvers: RepositoryResolvers, operation: str, relation: str) -> Any:
    def resolve(_: Any, info: Any, **arguments: Any) -> Any:
        return resolvers.change_relation(info, operation, relation, **arguments)
    return resolve
