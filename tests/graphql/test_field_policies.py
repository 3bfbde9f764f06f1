"""Fields by policy over GraphQL: null where the user may not see them, unknown to their filters
and sorts, and FORBIDDEN naming a field the user may not store."""
from tests.field_policies import field_policies  # noqa: F401  (a fixture)
from tests.graphql.test_endpoint import run

PREFIX = "/api/restify/posts"


async def test_a_field_one_may_not_see_is_null(field_policies, api, ann, bob):
    created = await api.post(PREFIX, {"title": "Hello", "body": "Text", "views": 7}, token=ann["token"])
    id = created.json["data"]["id"]
    query = f'{{ post(id: "{id}") {{ title views body }} postList {{ views body }} }}'
    assert await run(api, query, token=ann["token"]) == {
        "data": {"post": {"title": "Hello", "views": "7", "body": "Text"}, "postList": [{"views": "7", "body": None}]}}
    assert await run(api, query, token=bob["token"]) == {
        "data": {"post": {"title": "Hello", "views": None, "body": "Text"}, "postList": [{"views": None, "body": None}]}}


async def test_a_list_alone_hides_the_same_fields(field_policies, api, ann, bob):
    # One root list of plain fields is written straight from the stored documents: by the same rules.
    await api.post(PREFIX, {"title": "Hello", "body": "Text", "views": 7}, token=ann["token"])
    query = "{ postList { title views body } }"
    assert await run(api, query, token=ann["token"]) == {
        "data": {"postList": [{"title": "Hello", "views": "7", "body": None}]}}
    assert await run(api, query, token=bob["token"]) == {
        "data": {"postList": [{"title": "Hello", "views": None, "body": None}]}}


async def test_filters_and_sorts_on_a_field_one_may_not_see_are_refused(field_policies, api, ann):
    for query, name in (('{ postList(filter: {views: {gte: "1"}}) { id } }', "views"),
                        ('{ postList(sort: "-views") { id } }', "views")):
        body = await run(api, query, token=ann["token"])
        assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST", body
        assert name in body["errors"][0]["message"]


async def test_storing_a_field_one_may_not_is_forbidden(field_policies, api, bob):
    query = 'mutation { createPost(input: {title: "Mine", published: true}) { id } }'
    body = await run(api, query, token=bob["token"])
    assert body["errors"][0]["message"] == "You may not set the field 'published'."
    assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
