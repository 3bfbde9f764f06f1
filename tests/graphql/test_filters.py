"""`<type>List(first, page, search, sort, filter: <Type>Filter)` over real HTTP:
every operator of the typed inputs finds what REST's brackets find, search and sort, errors, the
typed inputs in the SDL, and the policy's scope on every list.

The demo app is edited as in tests/http/test_filters.py (`title` and `views` matchable, a date `due`),
and the schema is built from it in memory."""
import pytest
from gql import Client, gql
from gql.transport.httpx import HTTPXAsyncTransport

from service.console.application import make_app
from service.graphql.config import GraphQLConfig
from service.graphql.generator import render
from service.graphql.service import GraphQLService
from tests.graphql.test_endpoint import run
from tests.graphql.test_generator import members
from tests.http.test_filters import MATCHABLE, found, seed_all
from tests.http.test_index_queries import (  # noqa: F401  (config, registry: fixtures)
    POSTS, config, registry, seed_post)
from tests.policy_rules import published_or_own_scope, rules  # noqa: F401  (rules: a fixture)

pytestmark = pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
LIST = "query ($filter: PostFilter) { postList(first: 100, filter: $filter) { title } }"


@pytest.fixture
def app(restify, tmp_path):
    """The factory's app, with GraphQL built in memory from the edited repositories."""
    return make_app(restify, graphql=GraphQLService(restify, GraphQLConfig(app_dir=tmp_path)))


async def listed(api, filter, token: str | None = None) -> list[str]:
    body = await run(api, LIST, {"filter": filter}, token=token)
    assert "errors" not in body, body
    return sorted(post["title"] for post in body["data"]["postList"])


@pytest.mark.parametrize("filter, rest, expected", [
    ({"views": {"eq": 5}}, "views[eq]=5", ["Five"]),
    ({"views": {"eq": "5"}}, "views=5", ["Five"]),                       # a Long is also written as text
    ({"views": {"ne": 5}}, "views[ne]=5", ["Half", "Seven", "Zero", "a,b"]),
    ({"views": {"gt": 5}}, "views[gt]=5", ["Seven", "a,b"]),
    ({"views": {"gte": 5}}, "views[gte]=5", ["Five", "Seven", "a,b"]),
    ({"views": {"lt": 5}}, "views[lt]=5", ["Half", "Zero"]),
    ({"views": {"lte": 5}}, "views[lte]=5", ["Five", "Half", "Zero"]),
    ({"views": {"between": [3, 7]}}, "views[between]=3,7", ["Five", "Seven"]),
    ({"views": {"in": [0, 7, 8]}}, "views[in]=0,7,8", ["Seven", "Zero"]),
    ({"views": {"nin": [0, 7]}}, "views[nin]=0,7", ["Five", "Half", "a,b"]),
    ({"views": {"gte": 1, "lt": 8}}, "views[gte]=1&views[lt]=8", ["Five", "Half", "Seven"]),
    ({"views": {"gt": 1}, "title": {"in": ["Zero", "Five", "Half"]}}, "views[gt]=1&title[in]=Zero,Five,Half",
     ["Five", "Half"]),
    ({"title": {"in": ["a,b"]}}, "title[in]=a%2Cb&title[in]=a%2Cb", ["a,b"]),  # a list item keeps its comma
    ({"title": {"nin": ["a,b", "Zero"]}}, "title[nin]=a%2Cb&title[nin]=Zero", ["Five", "Half", "Seven"]),
    ({"title": {"ne": "Zero"}}, "title[ne]=Zero", ["Five", "Half", "Seven", "a,b"]),
    ({"title": {"eq": "Seven"}}, "title=Seven", ["Seven"]),
    ({"due": {"isNull": True}}, "due[null]=true", ["a,b"]),
    ({"due": {"isNull": False}}, "due[null]=false", ["Five", "Half", "Seven", "Zero"]),
    ({"due": {"eq": None}}, "due=null", ["a,b"]),
    ({"due": {"ne": None}}, "-due=null", ["Five", "Half", "Seven", "Zero"]),
    ({"due": {"between": ["2024-01-02", "2024-01-02"]}}, "due[between]=2024-01-02,2024-01-02", ["Five", "Seven"]),
    ({"due": {"lte": "2024-01-02"}}, "due[lte]=2024-01-02", ["Five", "Seven", "Zero"]),
    ({"due": {"gt": "2024-01-02"}}, "due[gt]=2024-01-02", ["Half"]),
    ({"due": {"lt": "2024-01-02T00:00:00.000Z"}}, "due[lt]=2024-01-02T00:00:00.000Z", ["Zero"]),
    ({"published": {"ne": True}}, "published[ne]=true", ["Five", "Half", "Seven", "Zero", "a,b"]),
    ({"published": {"eq": True}}, "published[eq]=true", []),
    ({}, "page=1", ["Five", "Half", "Seven", "Zero", "a,b"]),
])
async def test_each_operator_finds_what_the_rest_brackets_find(api, db, filter, rest, expected):
    await seed_all(db)
    assert await listed(api, filter) == expected
    assert await found(api, rest) == expected


async def test_a_filter_written_in_the_query_text_is_the_same_filter(api, db):
    await seed_all(db)
    body = await run(api, '{ postList(filter: {views: {between: [1, 7]}, due: {isNull: false}}) { title } }')
    assert body == {"data": {"postList": [{"title": "Five"}, {"title": "Seven"}, {"title": "Half"}]}}


async def test_an_empty_list_is_a_set_with_nothing_in_it(api, db):
    await seed_all(db)
    assert await listed(api, {"views": {"in": []}}) == []
    assert await listed(api, {"title": {"nin": []}}) == ["Five", "Half", "Seven", "Zero", "a,b"]


async def test_search_and_sort_are_the_rest_parameters(api, db):
    await seed_all(db)
    body = await run(api, '{ postList(search: "e", sort: "-views", filter: {views: {lt: 9}}) { title views } }')
    assert body == {"data": {"postList": [{"title": "Seven", "views": "7"}, {"title": "Five", "views": "5"},
                                          {"title": "Zero", "views": "0"}]}}
    body = await run(api, '{ postList(first: 2, page: 2, sort: "title") { title } }')
    assert body == {"data": {"postList": [{"title": "Seven"}, {"title": "Zero"}]}}


def bad_request(body: dict, field: str, name: str, message: str) -> None:
    assert body["data"] is None
    [error] = body["errors"]
    assert (error["message"], error["path"], error["extensions"]) == (
        message, [field], {"code": "BAD_REQUEST", "errors": {name: [message]}})


@pytest.mark.parametrize("filter, name, message", [
    ({"views": {"between": [1]}}, "filter.views.between", "The filter.views.between filter must be two values: [low, high]."),
    ({"views": {"between": [1, 2, 3]}}, "filter.views.between",
     "The filter.views.between filter must be two values: [low, high]."),
    ({"views": {"gt": None}}, "filter.views.gt", "The filter.views.gt filter needs a value to compare with."),
    ({"due": {"gte": "soon"}}, "filter.due.gte", "The filter.due.gte filter must be a date."),
    ({"due": {"isNull": None}}, "filter.due.isNull", "The filter.due.isNull filter must be true or false."),
])
async def test_a_filter_the_types_allow_but_the_rules_refuse_is_a_bad_request(api, db, filter, name, message):
    await seed_all(db)
    bad_request(await run(api, LIST, {"filter": filter}), "postList", name, message)


@pytest.mark.parametrize("filter, message", [
    ({"views": {"like": 5}}, "at .views: Expected value of type 'LongFilter' not to include unknown field 'like'. "
                             "Did you mean 'lte'? Found: {'like': 5}."),
    ({"title": {"gt": "a"}}, "at .title: Expected value of type 'StringFilter' not to include unknown field 'gt', "
                             "found: {'gt': 'a'}."),
    ({"body": {"eq": "x"}}, ": Expected value of type 'PostFilter' not to include unknown field 'body', "
                            "found: {'body': {'eq': 'x'}}."),
    ({"views": {"gte": "ten"}}, "at .views.gte: Long cannot represent non-integer value: 'ten'"),
])
async def test_an_operator_or_value_the_types_do_not_allow_is_refused_before_anything_runs(api, filter, message):
    body = await run(api, LIST, {"filter": filter})
    assert body == {"data": None, "errors": [{
        "message": f"Variable '$filter' has invalid value{' ' if message.startswith('at') else ''}{message}",
        "locations": [{"line": 1, "column": 8}], "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}


async def test_a_bad_sort_is_a_bad_request(api):
    body = await run(api, '{ postList(sort: "body") { title } }')
    assert body["errors"][0]["extensions"] == {"code": "BAD_REQUEST", "errors": {
        "sort": ["The field 'body' is not sortable; the sortable fields are: created_at, due, id, relevance, title, updated_at, user.name, views."]}}


def test_the_typed_inputs_follow_each_fields_description(registry, tmp_path):
    text = render(registry, GraphQLConfig(app_dir=tmp_path))
    assert members(text, "input", "PostFilter") == [
        "all: [PostFilter!]", "any: [PostFilter!]", "due: DateFilter", "has: [String!]", "hasNot: [String!]",
        "not: PostFilter", "published: BooleanFilter", "title: StringFilter", "user: PostUserFilter",
        "user_id: StringFilter", "views: LongFilter"]
    assert members(text, "input", "PostUserFilter") == ["name: StringFilter"]
    ordered = ["between: [{0}!]", "eq: {0}", "gt: {0}", "gte: {0}", "in: [{0}!]", "isNull: Boolean", "lt: {0}",
               "lte: {0}", "ne: {0}", "nin: [{0}!]"]
    assert members(text, "input", "LongFilter") == [m.format("Long") for m in ordered]
    assert members(text, "input", "DateFilter") == [m.format("String") for m in ordered]
    assert members(text, "input", "BooleanFilter") == ["eq: Boolean", "isNull: Boolean", "ne: Boolean"]
    assert members(text, "input", "StringFilter") == ["eq: String", "in: [String!]", "isNull: Boolean", "ne: String",
                                                      "nin: [String!]"]


@pytest.mark.parametrize("mapping, operators, members_", [
    ({"long": "Int"}, "IntFilter", "views: IntFilter"),
    ({"long": "Float"}, "FloatFilter", "views: FloatFilter"),
    ({"string": "ID"}, "IDFilter", "title: IDFilter"),
])
def test_each_scalar_has_its_operator_input(registry, tmp_path, mapping, operators, members_):
    text = render(registry, GraphQLConfig({"types": mapping}, app_dir=tmp_path))
    assert members_ in members(text, "input", "PostFilter")
    assert members(text, "input", operators)


async def test_the_policy_scope_holds_on_every_list(api, db, ann, rules):
    rules("posts", scope=published_or_own_scope)
    await seed_post(db, "Public", views=5, published=True)
    await seed_post(db, "Ann's draft", views=5, user_id=ann["id"])
    await seed_post(db, "Other draft", views=5)
    query = '{ postPage(filter: {views: {gte: 5}}) { data { title } meta { total } } }'
    guest = await run(api, query)
    assert guest == {"data": {"postPage": {"data": [{"title": "Public"}], "meta": {"total": 1}}}}
    mine = await run(api, query, token=ann["token"])
    assert mine == {"data": {"postPage": {"data": [{"title": "Public"}, {"title": "Ann's draft"}],
                                          "meta": {"total": 2}}}}


async def test_the_gql_client_sends_a_filter_as_variables(api, db):
    await seed_all(db)
    transport = HTTPXAsyncTransport(url=api.client.get_url("/graphql"))
    request = gql("query ($f: PostFilter, $n: Int) { postPage(first: $n, filter: $f, sort: \"views\") "
                  "{ data { title } meta { total perPage } } }")
    request.variable_values = {"f": {"views": {"gte": 1}, "title": {"nin": ["a,b"]}}, "n": 2}
    async with Client(transport=transport) as session:
        result = await session.execute(request)
    assert result == {"postPage": {"data": [{"title": "Half"}, {"title": "Five"}], "meta": {"total": 3, "perPage": 2}}}
