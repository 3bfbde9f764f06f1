"""Filters through relations on the MCP index and aggregate tools: the filter object's
`user: {name: {...}}`, `has` and `hasNot`, read by the same operation as REST's."""
from tests.http.test_relation_filters import talk  # noqa: F401  (a fixture)
from tests.http.test_relation_query import people, posts  # noqa: F401  (fixtures)
from tests.mcp.conftest import body, error
from tests.mcp.test_index_query import TOOL, call, titles
from tests.policy_rules import rules  # noqa: F401  (a fixture)


async def test_the_index_tool_filters_through_the_author_and_by_related_records(connect, ann, posts, talk):
    token = ann["token"]
    found = await call(connect, token, filter={"user": {"name": {"eq": "Ann"}}}, sort="title")
    assert (titles(found), found["meta"]["total"]) == (["a1", "a2", "a3"], 3)
    assert titles(await call(connect, token, filter={"has": ["comments"]}, sort="title")) == ["a1", "b1", "z1"]
    found = await call(connect, token, filter={"hasNot": ["comments"], "user": {"name": {"in": ["Ann", "Bob"]}}},
                       sort="title")
    assert titles(found) == ["a2", "a3", "b2"]


async def test_the_aggregate_tool_counts_what_the_index_tool_lists(connect, ann, posts, talk):
    given = {"any": [{"has": ["tags"]}, {"user": {"name": {"eq": "Zoe"}}}]}
    listed = await call(connect, ann["token"], filter=given)
    async with connect(ann["token"]) as session:
        counted = body(await session.call_tool("posts-aggregate-tool", {"filter": given}))
    assert [group["count"] for group in counted["data"]] == [listed["meta"]["total"]] == [4]


async def test_bad_relation_filters_are_error_results_naming_them(connect, rules, ann, posts):
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool(TOOL, {"filter": {"has": ["nope"]}}))
        assert refused["errors"] == {"filter.has": ["The relation 'nope' is not one has takes; it takes: comments, "
                                                    "tags."]}
        rules("users", allow_restify=lambda user: False)
        refused = error(await session.call_tool(TOOL, {"filter": {"not": {"user": {"name": {"eq": "Ann"}}}}}))
        assert refused["errors"] == {"filter.not.user": ["The filter through 'user' reads users, which this user "
                                                         "may not read."]}
