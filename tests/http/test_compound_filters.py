"""`filter=<JSON>` on the REST index: any, all and not over the typed filter object, combined with the
bracket filters by AND, bounded in depth and size; operator injection and malformed JSON are 400s.

The posts and the matchable fields are those of tests/http/test_filters.py; CASES is shared with the
GraphQL and MCP tests, which must find the same records."""
import json
from urllib.parse import quote

import pytest

from tests.http.test_filters import MATCHABLE, found, seed_all
from tests.http.test_index_queries import (  # noqa: F401  (config, registry: fixtures)
    POSTS, bad_request, config, registry)

pytestmark = pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)

# (filter object, titles found) over tests/http/test_filters.py's POSTS_SEEDED:
# Zero 0, Five 5, Seven 7, Half 2.5, "a,b" 9 (no due).
CASES = [
    ({"any": [{"views": {"eq": 0}}, {"views": {"gte": 7}}]}, ["Seven", "Zero", "a,b"]),
    ({"all": [{"views": {"gte": 1}}, {"views": {"lt": 8}}]}, ["Five", "Half", "Seven"]),
    ({"not": {"views": {"gt": 5}}}, ["Five", "Half", "Zero"]),
    ({"not": {"due": {"isNull": False}}}, ["a,b"]),                       # not also matches a missing field
    ({"not": {"due": {"lt": "2024-01-02"}}}, ["Five", "Half", "Seven", "a,b"]),
    ({"views": {"lt": 8}, "any": [{"title": {"eq": "Zero"}}, {"title": {"in": ["Seven", "a,b"]}}]},
     ["Seven", "Zero"]),
    ({"any": [{"not": {"views": {"gte": 1}}}, {"all": [{"views": {"gt": 5}}, {"due": {"isNull": True}}]}]},
     ["Zero", "a,b"]),
    ({"not": {"any": [{"title": {"eq": "Zero"}}, {"views": {"between": [5, 7]}}]}}, ["Half", "a,b"]),
    ({"any": [{"views": {"eq": 100}}]}, []),
    ({"any": [{}, {"views": {"eq": 100}}]}, ["Five", "Half", "Seven", "Zero", "a,b"]),  # {} holds for every record
    ({"not": {}}, []),
]
TOO_DEEP = {"any": [{"not": {"all": [{"any": [{"views": {"eq": 1}}]}]}}]}
DEEPEST = {"any": [{"not": {"all": [{"views": {"eq": 5}}]}}, {"title": {"eq": "Zero"}}]}
TOO_MANY = {"any": [{"views": {"eq": n}} for n in range(51)]}


def as_parameter(filter: object) -> str:
    return "filter=" + quote(json.dumps(filter))


@pytest.mark.parametrize("filter, expected", CASES)
async def test_any_all_and_not_find_what_they_say(api, db, filter, expected):
    await seed_all(db)
    assert await found(api, as_parameter(filter)) == expected


async def test_the_filter_parameter_combines_with_bracket_filters_by_and(api, db):
    await seed_all(db)
    filter = {"any": [{"views": {"lt": 1}}, {"views": {"gt": 6}}]}
    assert await found(api, as_parameter(filter) + "&views[lt]=8") == ["Seven", "Zero"]
    assert await found(api, as_parameter(filter) + "&title=Zero") == ["Zero"]


async def test_three_levels_of_nesting_are_read_and_a_fourth_is_refused(api, db):
    await seed_all(db)
    assert await found(api, as_parameter(DEEPEST)) == ["Half", "Seven", "Zero", "a,b"]
    message = "The filter may nest any, all and not at most 3 deep."
    bad_request(await api.get(f"{POSTS}?{as_parameter(TOO_DEEP)}"), message,
                {"filter.any.0.not.all.0.any": [message]})


async def test_more_than_fifty_conditions_are_refused(api, db):
    message = "The filter may hold at most 50 conditions."
    bad_request(await api.get(f"{POSTS}?{as_parameter(TOO_MANY)}"), message, {"filter": [message]})
    fifty = {"any": [{"views": {"eq": n}} for n in range(50)]}
    await seed_all(db)
    assert await found(api, as_parameter(fifty)) == ["Five", "Seven", "Zero", "a,b"]


@pytest.mark.parametrize("text, where, message", [
    ("{\"views\": ", "filter", "The filter parameter must be a JSON object: Expecting value: line 1 column 11 (char 10)."),
    ("[1]", "filter", "The filter must be an object of fields."),
    ('{"any": {"views": {"eq": 1}}}', "filter.any", "The filter.any must be a non-empty list of filter objects."),
    ('{"any": []}', "filter.any", "The filter.any must be a non-empty list of filter objects."),
    ('{"not": [1]}', "filter.not", "The filter.not must be an object of fields."),
    ('{"any": [{"views": {"gte": "many"}}]}', "filter.any.0.views.gte",
     "The filter.any.0.views.gte filter must be a number."),
])
async def test_malformed_filters_are_refused_naming_where(api, text, where, message):
    response = await api.get(f"{POSTS}?filter={quote(text)}")
    assert response.status == 400, response.body
    assert response.json["errors"] == {where: [response.json["message"]]}
    assert response.json["message"] == message


@pytest.mark.parametrize("injected, where", [
    ({"$where": "sleep(1000)"}, "filter.$where"),
    ({"any": [{"$where": "1"}]}, "filter.any.0.$where"),
    ({"not": {"views": {"$gt": 1}}}, "filter.not.views.$gt"),
    ({"views": {"$ne": None}}, "filter.views.$ne"),
])
async def test_operator_injection_is_refused(api, db, injected, where):
    response = await api.get(f"{POSTS}?{as_parameter(injected)}")
    assert response.status == 400, response.body
    assert list(response.json["errors"]) == [where]
