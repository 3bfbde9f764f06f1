"""The signed-in user's own tokens in the GraphQL schema: the query `tokens`, the mutations
`createToken(name, abilities, expires_in)` (its secret is in `token`, shown once) and
`revokeToken(id)`. The resolvers call the operations REST calls (service/core/operations/tokens.py)."""
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLField, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull,
    GraphQLObjectType, GraphQLResolveInfo, GraphQLSchema, GraphQLString,
)

from service.core.declarations.app import Restify
from service.core.operations import tokens
from service.graphql.contexts import field_context

_TEXTS = GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString)))
ACCESS_TOKEN = GraphQLObjectType("AccessToken", {
    "id": GraphQLField(GraphQLNonNull(GraphQLID)), "name": GraphQLField(GraphQLString),
    "abilities": GraphQLField(_TEXTS), "created_at": GraphQLField(GraphQLString),
    "last_used_at": GraphQLField(GraphQLString), "expires_at": GraphQLField(GraphQLString),
    "current": GraphQLField(GraphQLNonNull(GraphQLBoolean)),
}, description="One of the signed-in user's bearer tokens (never its secret).")
NEW_ACCESS_TOKEN = GraphQLObjectType("NewAccessToken", {
    "token": GraphQLField(GraphQLNonNull(GraphQLString), description='The bearer token, "<id>|<secret>": shown once.'),
    "accessToken": GraphQLField(GraphQLNonNull(ACCESS_TOKEN)),
})


def schema_fields() -> tuple[dict[str, GraphQLField], dict[str, GraphQLField]]:
    """(queries, mutations) of the user's tokens."""
    queries = {"tokens": GraphQLField(GraphQLNonNull(GraphQLList(GraphQLNonNull(ACCESS_TOKEN))))}
    mutations = {
        "createToken": GraphQLField(GraphQLNonNull(NEW_ACCESS_TOKEN), {
            "name": GraphQLArgument(GraphQLNonNull(GraphQLString)),
            "abilities": GraphQLArgument(GraphQLList(GraphQLNonNull(GraphQLString))),
            "expires_in": GraphQLArgument(GraphQLInt),
        }),
        "revokeToken": GraphQLField(GraphQLNonNull(GraphQLBoolean), {"id": GraphQLArgument(GraphQLNonNull(GraphQLID))}),
    }
    return queries, mutations


def bind(app: Restify, schema: GraphQLSchema) -> None:
    """Sets the resolvers of the token fields the schema has."""

    async def listing(_: Any, info: GraphQLResolveInfo) -> list[dict[str, Any]]:
        return (await tokens.listing(app, field_context(info)))["data"]

    async def create(_: Any, info: GraphQLResolveInfo, **arguments: Any) -> dict[str, Any]:
        body = await tokens.create(app, arguments, field_context(info))
        return {"token": body["meta"]["token"], "accessToken": body["data"]}

    async def revoke(_: Any, info: GraphQLResolveInfo, id: str) -> bool:
        await tokens.revoke(app, id, field_context(info))
        return True

    for owner, name, resolver in ((schema.query_type, "tokens", listing), (schema.mutation_type, "createToken", create),
                                  (schema.mutation_type, "revokeToken", revoke)):
        if owner is not None and name in owner.fields:
            owner.fields[name].resolve = resolver
