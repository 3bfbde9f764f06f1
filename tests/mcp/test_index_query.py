"""The MCP index tool's query language, through the SDK's client: `filter` with every
operator (the shape of GraphQL's `<Type>Filter`), `cursor` walks, `count`, errors naming
`filter.<field>.<op>`, links that carry the filter, the policy's scope, and the tool's schema."""
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.booleans import REFUSED, TYPED
from tests.http.test_filters import MATCHABLE, found, seed_all
from tests.http.test_index_queries import config, registry, seed_post  # noqa: F401  (fixtures)
from tests.mcp.conftest import PREFIX, error, ok
from tests.policy_rules import published_or_own_scope, rules  # noqa: F401  (rules: a fixture)

TOOL = "posts-index-tool"


async def call(connect, token: str, **arguments) -> dict:
    async with connect(token) as session:
        return ok(await session.call_tool(TOOL, arguments))


def titles(body: dict) -> list[str]:
    return [post["attributes"]["title"] for post in body["data"]]


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("filter, rest, expected", [
    ({"views": {"eq": 5}}, "views[eq]=5", ["Five"]),
    ({"views": {"ne": 5}}, "views[ne]=5", ["Half", "Seven", "Zero", "a,b"]),
    ({"views": {"gt": 5}}, "views[gt]=5", ["Seven", "a,b"]),
    ({"views": {"gte": 5}}, "views[gte]=5", ["Five", "Seven", "a,b"]),
    ({"views": {"lt": 5}}, "views[lt]=5", ["Half", "Zero"]),
    ({"views": {"lte": 2.5}}, "views[lte]=2.5", ["Half", "Zero"]),
    ({"views": {"between": [2.5, 7]}}, "views[between]=2.5,7", ["Five", "Half", "Seven"]),
    ({"views": {"in": [0, 7, 8]}}, "views[in]=0,7,8", ["Seven", "Zero"]),
    ({"views": {"nin": [0, 7]}}, "views[nin]=0,7", ["Five", "Half", "a,b"]),
    ({"views": {"gte": 1, "lt": 8}, "title": {"in": ["Zero", "Five", "Half"]}},
     "views[gte]=1&views[lt]=8&title[in]=Zero,Five,Half", ["Five", "Half"]),
    ({"title": {"in": ["a,b", "Zero"]}}, "title[in]=a%2Cb&title[in]=Zero", ["Zero", "a,b"]),
    ({"title": {"ne": "Zero"}}, "title[ne]=Zero", ["Five", "Half", "Seven", "a,b"]),
    ({"due": {"isNull": True}}, "due[null]=true", ["a,b"]),
    ({"due": {"isNull": False}}, "due[null]=false", ["Five", "Half", "Seven", "Zero"]),
    ({"due": {"ne": None}}, "-due=null", ["Five", "Half", "Seven", "Zero"]),
    ({"due": {"eq": None}}, "due=null", ["a,b"]),
    ({"due": {"between": ["2024-01-02", "2024-01-02"]}}, "due[between]=2024-01-02,2024-01-02", ["Five", "Seven"]),
    ({"due": {"lte": "2024-01-02"}}, "due[lte]=2024-01-02", ["Five", "Seven", "Zero"]),
    ({"due": {"gt": "2024-01-02"}}, "due[gt]=2024-01-02", ["Half"]),
    ({"published": {"eq": False}, "user_id": {"isNull": True}}, "published=false&user_id[null]=true",
     ["Five", "Half", "Seven", "Zero", "a,b"]),
    ({"published": {"ne": False}}, "published[ne]=false", []),
])
async def test_each_operator_finds_what_the_rest_brackets_find(connect, api, db, ann, filter, rest, expected):
    await seed_all(db)
    assert sorted(titles(await call(connect, ann["token"], filter=filter, perPage=50))) == expected
    assert await found(api, rest) == expected


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("filter, name, message", [
    ({"views": {"gte": "ten"}}, "filter.views.gte", "The filter.views.gte filter must be a number."),
    ({"views": {"like": 1}}, "filter.views.like", "The filter operator 'like' is not allowed on the field 'views'; "
                                                  "it takes eq, ne, gt, gte, lt, lte, in, nin, between, isNull."),
    ({"title": {"gt": "a"}}, "filter.title.gt", "The filter operator 'gt' is not allowed on the field 'title'; "
                                                "it takes eq, ne, in, nin, isNull."),
    ({"body": {"eq": "x"}}, "filter.body", "The field 'body' cannot be filtered; the filterable fields are: all, any, due, has, hasNot, not, published, title, user, user_id, views."),
    ({"views": 5}, "filter.views", "The filter of 'views' must be an object of operators, e.g. {\"eq\": ...}."),
    ({"views": {"between": [1]}}, "filter.views.between", "The filter.views.between filter must be two values: [low, high]."),
    ({"views": {"in": 5}}, "filter.views.in", "The filter.views.in filter must be a list of values."),
    ({"published": {"eq": "yes"}}, "filter.published.eq", "The filter.published.eq filter must be true or false."),
    ({"due": {"lte": "soon"}}, "filter.due.lte", "The filter.due.lte filter must be a date."),
    ("views>5", "filter", "The filter must be an object of fields."),
])
async def test_a_bad_filter_is_an_error_result_naming_where(connect, db, ann, filter, name, message):
    await seed_all(db)
    async with connect(ann["token"]) as session:
        body = error(await session.call_tool(TOOL, {"filter": filter}))
    assert body == {"message": message, "errors": {name: [message]}}


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("value, expected", TYPED)
async def test_a_filter_object_reads_a_boolean_as_every_door_does(connect, db, ann, value, expected):
    """`{"published": {"eq": "1"}}` was refused here (only true and false) while `published=1` was read."""
    await seed_all(db)  # every post a draft
    everyone = ["Five", "Half", "Seven", "Zero", "a,b"]
    assert sorted(titles(await call(connect, ann["token"], filter={"published": {"eq": value}}))) == \
        ([] if expected else everyone)
    assert sorted(titles(await call(connect, ann["token"], filter={"due": {"isNull": value}}))) == \
        (["a,b"] if expected else ["Five", "Half", "Seven", "Zero"])


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("value", REFUSED)
async def test_a_filter_object_refuses_what_every_door_refuses(connect, ann, value):
    async with connect(ann["token"]) as session:
        for filter, name in (({"published": {"eq": value}}, "filter.published.eq"),
                             ({"published": {"ne": value}}, "filter.published.ne"),
                             ({"due": {"isNull": value}}, "filter.due.isNull")):
            message = f"The {name} filter must be true or false."
            assert error(await session.call_tool(TOOL, {"filter": filter})) == {"message": message,
                                                                                "errors": {name: [message]}}
        if isinstance(value, str):  # the plain argument is a query-string value
            message = "The published filter must be true or false."
            assert error(await session.call_tool(TOOL, {"published": value})) == {"message": message,
                                                                                  "errors": {"published": [message]}}


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_a_cursor_walk_follows_meta_next_cursor_and_the_links_carry_the_filter(connect, api, db, ann):
    await seed_all(db)
    arguments = {"perPage": 2, "sort": "-views", "filter": {"views": {"gte": 0}, "title": {"nin": ["a,b"]}}}
    pages, body = [], await call(connect, ann["token"], cursor="", **arguments)
    while True:
        pages.append(titles(body))
        if body["meta"]["next_cursor"] is None:
            break
        next_link = body["links"]["next"]
        body = await call(connect, ann["token"], cursor=body["meta"]["next_cursor"], **arguments)
        # The link is the same query over REST: the filter as brackets, the cursor last.
        path = urlsplit(next_link)
        assert list(parse_qs(path.query))[-1] == "cursor"
        rest = await api.get(f"{path.path}?{path.query}", token=ann["token"])
        assert rest.status == 200, rest.body
        assert [p["attributes"]["title"] for p in rest.json["data"]] == titles(body)
    assert pages == [["Seven", "Five"], ["Half", "Zero"]]
    assert body["meta"]["current_page"] is None and body["meta"]["total"] == 4


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_a_page_link_carries_the_filter_too(connect, db, ann):
    await seed_all(db)
    body = await call(connect, ann["token"], perPage=1, filter={"title": {"in": ["a,b"]}, "views": {"between": [1, 9]}})
    assert titles(body) == ["a,b"]
    assert body["links"]["first"].endswith(
        f"{PREFIX}/posts?perPage=1&title%5Bin%5D=a%2Cb&title%5Bin%5D=a%2Cb&views%5Bbetween%5D=1%2C9&page=1")


async def test_count_none_leaves_the_total_out(connect, db, ann):
    for title in ("a", "b", "c"):
        await seed_post(db, title)
    body = await call(connect, ann["token"], perPage=2, count="none")
    assert (titles(body), body["meta"]["total"], body["meta"]["last_page"]) == (["a", "b"], None, None)
    assert body["meta"]["next_cursor"] is not None
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool(TOOL, {"count": "some"}))
    assert refused == {"message": "The count parameter must be exact or none.",
                       "errors": {"count": ["The count must be exact or none."]}}


async def test_a_tampered_cursor_is_an_error_result(connect, ann):
    async with connect(ann["token"]) as session:
        body = error(await session.call_tool(TOOL, {"cursor": "garbage"}))
    assert body == {"message": "The cursor is not valid.", "errors": {"cursor": ["The cursor is not valid."]}}


async def test_the_scope_holds_with_a_filter(connect, db, ann, bob, rules):
    rules("posts", scope=published_or_own_scope)
    await seed_post(db, "Public", published=True, user_id=bob["id"])
    await seed_post(db, "Ann's draft", user_id=ann["id"])
    await seed_post(db, "Bob's draft", user_id=bob["id"])
    chosen = {"filter": {"user_id": {"isNull": False}}}
    assert (await call(connect, ann["token"], **chosen))["meta"]["total"] == 2
    bobs = await call(connect, bob["token"], **chosen)
    assert (sorted(titles(bobs)), bobs["meta"]["total"]) == (["Bob's draft", "Public"], 2)
    ann_drafts = await call(connect, ann["token"], filter={"published": {"ne": True}})
    assert (titles(ann_drafts), ann_drafts["meta"]["total"]) == (["Ann's draft"], 1)


async def test_the_tool_offers_filter_cursor_and_count(connect, ann):
    async with connect(ann["token"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    schema = tools[TOOL].input_schema["properties"]
    assert schema["filter"]["properties"]["published"] == {
        "type": "object", "additionalProperties": False, "properties": {
            "eq": {"type": ["boolean", "null"], "description": "Equals this value (null: records without one)."},
            "ne": {"type": ["boolean", "null"], "description": "Differs from this value (null: records with one)."},
            "isNull": {"type": "boolean",
                       "description": "true: only records without a value; false: only those with one."}}}
    assert list(schema["filter"]["properties"]["user_id"]["properties"]) == ["eq", "ne", "in", "nin", "isNull"]
    assert schema["count"]["enum"] == ["exact", "none"] and schema["cursor"]["type"] == "string"
    description = tools[TOOL].description
    assert 'filter takes operators per field, e.g. {"views": {"ne": null}}' in description
    assert "pass meta.next_cursor as cursor" in description
    assert "cursor" not in tools["tags-show-tool"].input_schema["properties"]


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_a_ranged_field_has_every_operator_typed(connect, ann):
    async with connect(ann["token"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    views = tools[TOOL].input_schema["properties"]["filter"]["properties"]["views"]["properties"]
    assert list(views) == ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "between", "isNull"]
    assert {k: v for k, v in views["between"].items() if k != "description"} == {
        "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
    due = tools[TOOL].input_schema["properties"]["filter"]["properties"]["due"]["properties"]
    assert due["lte"] == {"type": "string", "description": "At most this value. A date-only upper bound includes "
                                                           "that whole day."}
