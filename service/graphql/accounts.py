"""Accounts by mail in the GraphQL schema, where the application has a user repository:

    mutation forgotPassword(email: String!): Boolean!        (true, whether the address has an account or not)
    mutation resetPassword(email: String!, token: String!, password: String!,
                           passwordConfirmation: String!): Boolean!
    mutation resendVerification: Boolean!                    (the logged-in user's; true once queued or verified)

The resolvers call the operations REST calls (`service.core.operations.accounts`), so the throttles,
the answers alike for unknown addresses and the errors (422 `errors.token`, 429) are the same.
The verification link itself stays a REST route: it is opened from a mail, in a browser.
"""
from typing import Any

from graphql import GraphQLArgument, GraphQLBoolean, GraphQLField, GraphQLNonNull, GraphQLResolveInfo, GraphQLString
from graphql import GraphQLSchema

from service.core.declarations.app import Restify
from service.core.operations import accounts
from service.graphql.contexts import field_context

_TEXT = GraphQLArgument(GraphQLNonNull(GraphQLString))


def mutation_fields() -> dict[str, GraphQLField]:
    done = GraphQLNonNull(GraphQLBoolean)
    return {
        "forgotPassword": GraphQLField(done, {"email": _TEXT}),
        "resetPassword": GraphQLField(done, {"email": _TEXT, "token": _TEXT, "password": _TEXT,
                                             "passwordConfirmation": _TEXT}),
        "resendVerification": GraphQLField(done),
    }


def bind(app: Restify, schema: GraphQLSchema) -> None:
    """Sets the resolvers of the mutations the schema has."""
    async def forgot(_: Any, info: GraphQLResolveInfo, email: str) -> bool:
        await accounts.forgot_password(app, {"email": email}, field_context(info))
        return True

    async def reset(_: Any, info: GraphQLResolveInfo, email: str, token: str, password: str,
                    passwordConfirmation: str) -> bool:  # noqa: N803 - the GraphQL argument's name
        await accounts.reset_password(app, {"email": email, "token": token, "password": password,
                                            "password_confirmation": passwordConfirmation}, field_context(info))
        return True

    async def resend(_: Any, info: GraphQLResolveInfo) -> bool:
        await accounts.resend_verification(app, field_context(info))
        return True

    mutation = schema.mutation_type
    for name, resolver in (("forgotPassword", forgot), ("resetPassword", reset), ("resendVerification", resend)):
        if mutation is not None and name in mutation.fields:
            mutation.fields[name].resolve = resolver
