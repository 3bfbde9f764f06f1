"""any, all and not in `<Type>Filter` over real HTTP: the same records as REST's `filter=<JSON>`, and
the same 400s for a filter nested too deep or holding too many conditions."""
import pytest

from tests.graphql.test_endpoint import run
from tests.graphql.test_filters import LIST, app, bad_request, listed  # noqa: F401  (app: a fixture)
from tests.http.test_compound_filters import CASES, DEEPEST, TOO_DEEP, TOO_MANY, as_parameter
from tests.http.test_filters import MATCHABLE, found, seed_all
from tests.http.test_index_queries import config, registry  # noqa: F401  (fixtures)

pytestmark = pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)


@pytest.mark.parametrize("filter, expected", [*CASES, (DEEPEST, ["Half", "Seven", "Zero", "a,b"])])
async def test_any_all_and_not_find_what_rest_finds(api, db, filter, expected):
    await seed_all(db)
    assert await listed(api, filter) == expected
    assert await found(api, as_parameter(filter)) == expected


@pytest.mark.parametrize("filter, name, message", [
    (TOO_DEEP, "filter.any.0.not.all.0.any", "The filter may nest any, all and not at most 3 deep."),
    (TOO_MANY, "filter", "The filter may hold at most 50 conditions."),
    ({"any": []}, "filter.any", "The filter.any must be a non-empty list of filter objects."),
])
async def test_a_filter_beyond_its_bounds_is_a_bad_request(api, filter, name, message):
    bad_request(await run(api, LIST, {"filter": filter}), "postList", name, message)
