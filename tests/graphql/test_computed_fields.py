"""Computed fields over GraphQL: fields of the type, typed by their declared kind."""
from tests.computed_fields import computed_posts  # noqa: F401  (a fixture)
from tests.graphql.test_endpoint import run
from tests.soft_deletes import created_post
from tests.soft_deletes import soft_posts as in_memory_schema  # noqa: F401  (a fixture: the schema from the code)


async def test_computed_fields_are_answered(in_memory_schema, computed_posts, api, ann):
    await created_post(api, ann["token"], title="Hello")
    body = await run(api, "{ postList { title comment_count title_length shout } }", token=ann["token"])
    assert body == {"data": {"postList": [{"title": "Hello", "comment_count": "0", "title_length": "5",
                                           "shout": "HELLO"}]}}
