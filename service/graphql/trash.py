"""Soft deletes in the GraphQL schema: for a repository with `soft_deletes`, `trashed: Trashed` on
`<type>`, `<type>List`, `<type>Page` and `<type>Aggregate`, `force: Boolean` on `delete<Type>`, and `restore<Type>(id,
version)`, which returns the record restored. The resolvers pass them on as REST's `?trashed=` and
`?force=` (service/core/operations/crud.py, trash.py)."""
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLEnumType, GraphQLField, GraphQLID, GraphQLInt, GraphQLNonNull,
)

from service.core.declarations.registry import Resource

TRASHED = GraphQLEnumType("Trashed", {"WITH": "WITH", "ONLY": "ONLY"}, description=(
    "Trashed records too (WITH) or only them (ONLY), those the policy's view_trashed (else delete) lets you "
    "see; without it, trashed records are left out."))


def add_fields(resource: Resource, name: str, type_name: str, obj: Any, query: dict[str, GraphQLField],
               mutation: dict[str, GraphQLField]) -> None:
    """The soft-delete arguments and `restore<Type>`, when `resource` has soft deletes."""
    if not resource.soft_deletes:
        return
    for reading in (name, f"{name}List", f"{name}Page", f"{name}Aggregate"):
        if reading in query:  # an aggregate only where the repository declares group keys or metrics
            query[reading].args["trashed"] = GraphQLArgument(TRASHED)
    mutation[f"delete{type_name}"].args["force"] = GraphQLArgument(
        GraphQLBoolean, description="Delete for good (policy force_delete, else delete), trashed or not.")
    mutation[f"restore{type_name}"] = GraphQLField(
        GraphQLNonNull(obj), {"id": GraphQLArgument(GraphQLNonNull(GraphQLID)), "version": GraphQLArgument(GraphQLInt)},
        description="Restores a trashed record (policy restore, else delete).")


def bind(mutation: Any, type_name: str, resolvers: Any, setter: Any) -> None:
    setter(mutation, f"restore{type_name}", lambda _, info, r=resolvers, **kw: r.restore(info, **kw))
