"""Computed fields on the demo's posts, for one test: `comment_count` (one query per list of posts,
`computed_many`), `title_length` (plain, per record) and `shout` (async, per record)."""
from collections.abc import Iterator
from typing import Any

import pytest

from service import field


async def _shout(record: Any, context: Any) -> str:
    return str(record.title).upper()


def computed_fields() -> list:
    return [
        field("comment_count").integer().computed_many(
            lambda posts, context: context.count_by("comments", "post_id", [p.id for p in posts])),
        field("title_length").integer().computed(lambda record, context: len(record.title or "")),
        field("shout").computed(_shout),
    ]


@pytest.fixture
def computed_posts(registry) -> Iterator[None]:
    """Request it before `api` (the GraphQL schema is built with the app)."""
    repository = registry.get("posts").repository
    declared = type(repository).fields
    repository.fields = lambda request: [*declared(repository, request), *computed_fields()]
    yield
    del repository.fields
