"""Every value REST stores comes back through GraphQL: an integer field without a 32-bit
bound (`views`: `integer`, `min:0`) is a `Long`, written in JSON as a string and taking a string or an
integer as input; what GraphQL writes REST reads back, and the other way round.
"""
import pytest

from tests.graphql.test_endpoint import (  # noqa: F401 - `app` is the fixture the parametrization below builds
    app, invalid, post_count, run, serving, without_generated_files,
)

POSTS = "/api/restify/posts"
BIG = 3_000_000_000  # past Int's 2^31 - 1
LARGEST = 2 ** 63 - 1


async def test_a_views_stored_through_rest_past_32_bits_reads_back_through_graphql_as_a_string(api, ann):
    created = await api.post(POSTS, {"title": "Big", "views": BIG}, token=ann["token"])
    assert created.status == 201, created.body
    id = created.json["data"]["id"]
    assert await run(api, f'{{ post(id: "{id}") {{ title views }} }}') == {
        "data": {"post": {"title": "Big", "views": "3000000000"}}}
    assert await run(api, "{ postList { views } }") == {"data": {"postList": [{"views": "3000000000"}]}}


@pytest.mark.parametrize("app", [serving(without_generated_files)], indirect=True)
async def test_a_schema_built_in_memory_serves_long_the_same_way(api, ann):
    query = 'mutation { createPost(input: {title: "Big", views: "3000000000"}) { views } }'
    assert await run(api, query, token=ann["token"]) == {"data": {"createPost": {"views": "3000000000"}}}


@pytest.mark.parametrize("written, variables", [
    ('"3000000000"', None),
    ("3000000000", None),
    ("$views", {"views": "3000000000"}),
    ("$views", {"views": BIG}),
], ids=["string-literal", "int-literal", "string-variable", "int-variable"])
async def test_create_post_writes_a_long_that_rest_reads_back(api, db, ann, written, variables):
    declared = "($views: Long)" if variables else ""
    query = f'mutation{declared} {{ createPost(input: {{title: "Big", views: {written}}}) {{ id views }} }}'
    body = await run(api, query, variables, token=ann["token"])
    id = body["data"]["createPost"]["id"]
    assert body == {"data": {"createPost": {"id": id, "views": "3000000000"}}}
    assert (await db.collection("posts").find_by_id(id))["views"] == BIG
    rest = await api.get(f"{POSTS}/{id}")
    assert rest.json["data"]["attributes"]["views"] == BIG


async def test_update_post_writes_the_largest_64_bit_integer(api, db, ann):
    created = await api.post(POSTS, {"title": "Big"}, token=ann["token"])
    id = created.json["data"]["id"]
    query = 'mutation($id: ID!) { updatePost(id: $id, input: {views: "9223372036854775807"}) { views } }'
    assert await run(api, query, {"id": id}, token=ann["token"]) == {
        "data": {"updatePost": {"views": "9223372036854775807"}}}
    assert (await db.collection("posts").find_by_id(id))["views"] == LARGEST


@pytest.mark.parametrize("literal, message", [
    ('"3e9"', 'Long cannot represent non-integer value: "3e9"'),
    ("1.5", "Long cannot represent non-integer value: 1.5"),
    ('"9223372036854775808"', 'Long cannot represent non 64-bit signed integer value: "9223372036854775808"'),
    ("true", "Long cannot represent non-integer value: true"),
], ids=["exponent-string", "fraction", "past-64-bits", "boolean"])
async def test_a_literal_that_is_not_a_64_bit_integer_is_refused_and_nothing_is_stored(api, db, ann, literal,
                                                                                       message):
    query = f'mutation {{ createPost(input: {{title: "Big", views: {literal}}}) {{ id }} }}'
    body = await run(api, query, token=ann["token"])
    assert body == {"errors": [invalid(message, query.index("views: ") + len("views: ") + 1)]}
    assert await post_count(db) == 0


@pytest.mark.parametrize("value, message", [
    ("x", "Variable '$views' has invalid value: Long cannot represent non-integer value: 'x'"),
    (2 ** 63, "Variable '$views' has invalid value: "
              "Long cannot represent non 64-bit signed integer value: 9223372036854775808"),
    (1.5, "Variable '$views' has invalid value: Long cannot represent non-integer value: 1.5"),
], ids=["word", "past-64-bits", "fraction"])
async def test_a_variable_that_is_not_a_64_bit_integer_is_refused_and_nothing_is_stored(api, db, ann, value,
                                                                                       message):
    query = 'mutation($views: Long) { createPost(input: {title: "Big", views: $views}) { id } }'
    body = await run(api, query, {"views": value}, token=ann["token"])
    assert body == {"data": None, "errors": [invalid(message, 10)]}
    assert await post_count(db) == 0
