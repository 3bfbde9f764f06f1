"""any, all and not in the MCP index tool's `filter`, through the SDK's client: the same records as
REST's `filter=<JSON>`, the same refusals, and the tool's schema naming them."""
import pytest

from tests.http.test_compound_filters import CASES, DEEPEST, TOO_DEEP, TOO_MANY, as_parameter
from tests.http.test_filters import MATCHABLE, found, seed_all
from tests.http.test_index_queries import config, registry  # noqa: F401  (fixtures)
from tests.mcp.conftest import error
from tests.mcp.test_index_query import TOOL, call, titles

pytestmark = pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)


@pytest.mark.parametrize("filter, expected", [*CASES, (DEEPEST, ["Half", "Seven", "Zero", "a,b"])])
async def test_any_all_and_not_find_what_rest_finds(connect, api, db, ann, filter, expected):
    await seed_all(db)
    assert sorted(titles(await call(connect, ann["token"], filter=filter, perPage=50))) == expected
    assert await found(api, as_parameter(filter)) == expected


@pytest.mark.parametrize("filter, name, message", [
    (TOO_DEEP, "filter.any.0.not.all.0.any", "The filter may nest any, all and not at most 3 deep."),
    (TOO_MANY, "filter", "The filter may hold at most 50 conditions."),
    ({"not": {"$where": "1"}}, "filter.not.$where",
     "The field '$where' cannot be filtered; the filterable fields are: all, any, due, has, hasNot, not, published, "
     "title, user, user_id, views."),
])
async def test_a_filter_beyond_its_bounds_is_an_error_result(connect, ann, filter, name, message):
    async with connect(ann["token"]) as session:
        body = error(await session.call_tool(TOOL, {"filter": filter}))
    assert body == {"message": message, "errors": {name: [message]}}


async def test_the_tools_schema_names_any_all_and_not(connect, ann):
    async with connect(ann["token"]) as session:
        [tool] = [t for t in (await session.list_tools()).tools if t.name == TOOL]
    members = tool.input_schema["properties"]["filter"]["properties"]
    assert (members["any"]["type"], members["all"]["type"], members["not"]["type"]) == ("array", "array", "object")
