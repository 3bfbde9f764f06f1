"""The context a GraphQL field's operation runs in, made from its request's."""
from typing import Any

from graphql import GraphQLResolveInfo

from service.core.declarations.context import Context


def field_context(info: GraphQLResolveInfo, params: dict[str, str] | None = None,
                  extras: dict[str, Any] | None = None, **more: Any) -> Context:
    """The request's user and base URL; its client address, by which a guest's expensive queries take
    turns; no authorization flags, which GraphQL's types have no place for."""
    return request_field_context(info.context["context"], params, extras, **more)


def request_field_context(base: Context, params: dict[str, str] | None = None,
                          extras: dict[str, Any] | None = None, **more: Any) -> Context:
    """`field_context` from the request's own context (`base`)."""
    return Context(user=base.user, door="graphql", base_url=base.base_url, params=params or {},
                   extras={"address": base.extras.get("address"), **(extras or {})}, shows_flags=False, **more)
