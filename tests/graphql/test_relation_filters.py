"""Filters through relations on GraphQL: `PostFilter`'s `user: {name: {...}}`, `has` and `hasNot`, read by
the same operation as REST's `user.name[op]=v` and `has=`, within the related repositories' read rules."""
from tests.graphql.test_endpoint import run
from tests.http.test_relation_filters import talk  # noqa: F401  (a fixture)
from tests.http.test_relation_query import people, posts  # noqa: F401  (fixtures)
from tests.policy_rules import rules  # noqa: F401  (a fixture)

LIST = "query ($f: PostFilter) { postList(first: 50, filter: $f, sort: \"title\") { title } }"
AGGREGATE = "query ($f: PostFilter) { postAggregate(filter: $f) { data { count } } }"


async def titles(api, token, given) -> list[str]:
    body = await run(api, LIST, {"f": given}, token=token)
    assert "errors" not in body, body
    return [post["title"] for post in body["data"]["postList"]]


async def test_post_list_filters_through_the_author_and_by_related_records(api, ann, posts, talk):
    token = ann["token"]
    assert await titles(api, token, {"user": {"name": {"eq": "Ann"}}}) == ["a1", "a2", "a3"]
    assert await titles(api, token, {"user": {"name": {"in": ["Bob", "Zoe"]}}, "views": {"gte": 5}}) == ["b1", "z1"]
    assert await titles(api, token, {"has": ["comments"]}) == ["a1", "b1", "z1"]
    assert await titles(api, token, {"hasNot": ["comments", "tags"]}) == ["a3", "m1", "o1", "o2", "z2"]
    assert await titles(api, token, {"any": [{"has": ["tags"]}, {"not": {"user": {"name": {"ne": "Zoe"}}}}]}) == \
        ["a2", "b2", "m1", "o1", "o2", "z1", "z2"]
    assert await titles(api, None, {"user": {"name": {"eq": "Ann"}}}) == []  # guests may not see users
    assert await titles(api, token, {"has": None, "user": None}) == \
        ["a1", "a2", "a3", "b1", "b2", "m1", "o1", "o2", "z1", "z2"]  # null: no filter, as for a field


async def test_an_aggregation_counts_what_the_list_holds(api, ann, posts, talk):
    given = {"user": {"name": {"eq": "Ann"}}, "has": ["comments"]}
    body = await run(api, AGGREGATE, {"f": given}, token=ann["token"])
    assert "errors" not in body, body
    assert body["data"]["postAggregate"]["data"] == [{"count": 1}]
    assert await titles(api, ann["token"], given) == ["a1"]


async def test_bad_relation_filters_are_bad_requests_naming_them(api, rules, ann, posts):
    body = await run(api, LIST, {"f": {"has": ["user"]}}, token=ann["token"])
    message = "The relation 'user' is not one has takes; it takes: comments, tags."
    assert body["errors"][0]["extensions"] == {"code": "BAD_REQUEST", "errors": {"filter.has": [message]}}
    rules("users", allow_restify=lambda user: False)
    body = await run(api, LIST, {"f": {"not": {"user": {"name": {"eq": "Ann"}}}}}, token=ann["token"])
    message = "The filter through 'user' reads users, which this user may not read."
    assert body["errors"][0]["extensions"] == {"code": "BAD_REQUEST", "errors": {"filter.not.user": [message]}}
    body = await run(api, LIST, {"f": {"user": {"email": {"eq": "a"}}}}, token=ann["token"])
    assert "errors" in body and body.get("data") is None  # the input type has no such member
