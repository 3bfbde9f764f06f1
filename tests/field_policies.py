"""Fields by policy on the demo's posts, for one test: `views` only its author sees (nobody may
filter, sort or search on it), `body` is left out of lists, `cover` is hidden from MCP and GraphQL,
and `published` only Ann may set or change (`can_store` / `can_update`)."""
from collections.abc import Iterator
from typing import Any

import pytest

from service.core.declarations.registry import Registry


def _author(user: Any, record: Any) -> bool:
    return user is not None and record is not None and record.user_id == user.id


def _ann(user: Any, record: Any) -> bool:
    return user is not None and user.name == "Ann"


CHANGES = {
    "views": lambda f: f.can_see(_author),
    "body": lambda f: f.hide_on_index(),
    "cover": lambda f: f.hide_from("mcp", "graphql"),
    "published": lambda f: f.can_store(_ann).can_update(_ann),
}


def with_field_policies(registry: Registry) -> Registry:
    """`registry` with the posts' fields changed as the module says (until `without_field_policies`)."""
    repository = registry.get("posts").repository
    declared = type(repository).fields
    repository.fields = lambda request: [CHANGES[f.name](f) if f.name in CHANGES else f
                                         for f in declared(repository, request)]
    return registry


@pytest.fixture
def field_policies(registry) -> Iterator[None]:
    """Request it before `api` (the GraphQL schema is built with the app)."""
    with_field_policies(registry)
    yield
    del registry.get("posts").repository.fields
