"""Typed filter objects (GraphQL's `<Type>Filter` and MCP's `filter`): each operator reads into
exactly what REST's `<field>[op]=v` reads into, and each refusal names `filter.<field>.<op>`; the
in-process matcher live feeds use answers each condition as the database does."""
import pytest

from service import field
from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.description import describe
from service.core.kernel.errors import BadRequest
from service.core.kernel.matching import satisfies
from service.core.reading.filter_objects import FILTER, apply_filter, index_query, object_operators
from service.core.reading.query import IndexQuery, parse_index
from tests.conftest import ROOT

FIELDS = [
    field("views").numeric().rules("integer").matchable(),
    field("ratio").numeric().matchable(),
    field("title").matchable(),
    field("published").boolean().matchable(),
    field("due").date().nullable().matchable(),
    field("body").textarea(),  # not matchable
]
SETTINGS = Settings(app_dir=ROOT)


class Posts:
    """Enough of a resource for `parse_index`."""
    relations: dict = {}
    per_page = None


def rest(query: str, repeated: dict | None = None) -> IndexQuery:
    params = dict(part.split("=", 1) for part in query.split("&"))
    return parse_index(Posts(), FIELDS, params, SETTINGS, repeated or {})


def typed(given) -> IndexQuery:
    return index_query(Posts(), FIELDS, Context(extras={FILTER: given}), SETTINGS)


@pytest.mark.parametrize("given, query", [
    ({"views": {"eq": 5}}, "views[eq]=5"),
    ({"views": {"eq": None}}, "views=null"),
    ({"views": {"ne": 5}}, "views[ne]=5"),
    ({"views": {"ne": None}}, "-views=null"),
    ({"views": {"gt": 5}}, "views[gt]=5"),
    ({"views": {"gte": 10, "lt": 100}}, "views[gte]=10&views[lt]=100"),
    ({"views": {"lte": 7}}, "views[lte]=7"),
    ({"views": {"between": [1, 5]}}, "views[between]=1,5"),
    ({"views": {"in": [0, 7]}}, "views[in]=0,7"),
    ({"views": {"nin": [0, 7]}}, "views[nin]=0,7"),
    ({"views": {"isNull": True}}, "views[null]=true"),
    ({"ratio": {"between": [0.5, 2.5]}}, "ratio[between]=0.5,2.5"),
    ({"views": {"gte": "3000000000"}}, "views[gte]=3000000000"),       # GraphQL's Long is written as text
    ({"title": {"in": ["a", "b"]}}, "title[in]=a&title[in]=b"),
    ({"title": {"ne": "Zero"}}, "title[ne]=Zero"),
    ({"title": {"isNull": False}}, "title[null]=false"),
    ({"published": {"eq": True}}, "published[eq]=true"),
    ({"published": {"ne": False}}, "published[ne]=false"),
    ({"due": {"between": ["2024-01-02", "2024-01-02"]}}, "due[between]=2024-01-02,2024-01-02"),  # the whole day
    ({"due": {"lte": "2024-01-02"}}, "due[lte]=2024-01-02"),
    ({"due": {"ne": None}}, "-due=null"),
    ({"due": {"gt": "2024-01-02"}}, "due[gt]=2024-01-02"),
    ({"due": {"lte": "2024-01-02T00:00:00.000Z"}}, "due[lte]=2024-01-02T00:00:00.000Z"),
    ({"views": {}, "title": None}, "page=1"),                             # no operator: no filter
])
def test_each_operator_reads_as_the_rest_brackets_do(given, query):
    params = rest(query, {"title[in]": ["a", "b"]})
    found = typed(given)
    assert (found.equals, found.conditions) == (params.equals, params.conditions)


def test_a_date_only_upper_bound_includes_its_day():
    assert typed({"due": {"between": ["2024-01-01", "2024-01-02"]}}).conditions == [
        ("due", "gte", "2024-01-01"), ("due", "lt", "2024-01-03")]


def test_filter_objects_combine_with_the_parameters_and_an_exact_value_given_twice_must_hold_twice():
    query = index_query(Posts(), FIELDS, Context(params={"published": "true", "views[gt]": "1"},
                                                 extras={FILTER: {"published": {"eq": False}, "views": {"lt": 9}}}),
                        SETTINGS)
    assert query.equals == {"published": True}
    assert query.conditions == [("views", "gt", 1), ("published", "in", (False,)), ("views", "lt", 9)]


def test_a_text_that_reads_null_is_a_text_not_a_missing_value():
    assert typed({"title": {"eq": "null"}}).equals == {"title": "null"}


def test_each_type_takes_its_operators_by_their_object_names():
    assert object_operators(describe(field("a").boolean())) == ["eq", "ne", "isNull"]
    assert object_operators(describe(field("a"))) == ["eq", "ne", "in", "nin", "isNull"]
    assert object_operators(describe(field("a").numeric())) == [
        "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "between", "isNull"]


ORDERED = "eq, ne, gt, gte, lt, lte, in, nin, between, isNull"


@pytest.mark.parametrize("given, name, message", [
    ([1], "filter", "The filter must be an object of fields."),
    ({"nope": {"eq": 1}}, "filter.nope", "The field 'nope' cannot be filtered; the filterable fields are: all, any, due, has, hasNot, not, published, ratio, title, views."),
    ({"body": {"eq": "x"}}, "filter.body", "The field 'body' cannot be filtered; the filterable fields are: all, any, due, has, hasNot, not, published, ratio, title, views."),
    ({"views": 5}, "filter.views", "The filter of 'views' must be an object of operators, e.g. {\"eq\": ...}."),
    ({"views": {"like": 5}}, "filter.views.like",
     f"The filter operator 'like' is not allowed on the field 'views'; it takes {ORDERED}."),
    ({"views": {"null": True}}, "filter.views.null",
     f"The filter operator 'null' is not allowed on the field 'views'; it takes {ORDERED}."),
    ({"title": {"gt": "a"}}, "filter.title.gt",
     "The filter operator 'gt' is not allowed on the field 'title'; it takes eq, ne, in, nin, isNull."),
    ({"published": {"in": [True]}}, "filter.published.in",
     "The filter operator 'in' is not allowed on the field 'published'; it takes eq, ne, isNull."),
    ({"views": {"gte": "ten"}}, "filter.views.gte", "The filter.views.gte filter must be a number."),
    ({"views": {"gte": True}}, "filter.views.gte", "The filter.views.gte filter must be a number."),
    ({"views": {"in": [1, "x"]}}, "filter.views.in", "The filter.views.in filter must be a number."),
    ({"views": {"in": 1}}, "filter.views.in", "The filter.views.in filter must be a list of values."),
    ({"views": {"between": [1]}}, "filter.views.between", "The filter.views.between filter must be two values: [low, high]."),
    ({"views": {"between": [1, None]}}, "filter.views.between",
     "The filter.views.between filter needs a value to compare with."),
    ({"views": {"gt": None}}, "filter.views.gt", "The filter.views.gt filter needs a value to compare with."),
    ({"views": {"isNull": "yes"}}, "filter.views.isNull", "The filter.views.isNull filter must be true or false."),
    ({"published": {"eq": "on"}}, "filter.published.eq", "The filter.published.eq filter must be true or false."),
    ({"title": {"eq": 5}}, "filter.title.eq", "The filter.title.eq filter must be a text."),
    ({"due": {"gte": "soon"}}, "filter.due.gte", "The filter.due.gte filter must be a date."),
])
def test_a_bad_filter_object_is_a_400_naming_where(given, name, message):
    with pytest.raises(BadRequest) as raised:
        typed(given)
    assert raised.value.body() == {"message": message, "errors": {name: [message]}}


def test_no_object_changes_nothing():
    query = rest("page=1")
    apply_filter(query, FIELDS, None)
    assert (query.equals, query.conditions) == ({}, [])


# -- the in-process matcher: what a live feed tests each changed record with -------------------------

DOCUMENT = {"views": 5, "title": "Five", "published": 1, "due": "2024-01-02T10:00:00.000Z"}


@pytest.mark.parametrize("given, expected", [
    ({"views": {"gt": 4}}, True), ({"views": {"gt": 5}}, False),
    ({"views": {"gte": 5, "lt": 6}}, True), ({"views": {"lte": 4}}, False),
    ({"views": {"between": [5, 5]}}, True), ({"views": {"between": [6, 9]}}, False),
    ({"views": {"in": [1, 5]}}, True), ({"views": {"nin": [1, 5]}}, False),
    ({"views": {"ne": 5}}, False), ({"views": {"ne": None}}, True),
    ({"views": {"isNull": False}}, True), ({"ratio": {"isNull": True}}, True),   # a missing field is null
    ({"ratio": {"ne": 2}}, True), ({"ratio": {"nin": [2]}}, True), ({"ratio": {"gt": 0}}, False),
    ({"title": {"in": ["Five", "a"]}}, True), ({"title": {"ne": "Five"}}, False),
    ({"published": {"ne": False}}, True),                                       # 1/0 stored for a boolean
    ({"due": {"lte": "2024-01-02"}}, True), ({"due": {"gt": "2024-01-02"}}, False),
    ({"due": {"gte": "2024-01-02T10:00:00.001Z"}}, False),
])
def test_the_matcher_answers_each_condition_as_the_database_does(given, expected):
    assert satisfies(typed(given).conditions, DOCUMENT) is expected


def test_the_matcher_never_orders_across_kinds():
    assert satisfies([("views", "gt", "1")], {"views": 5}) is False
    assert satisfies([("title", "lt", 9)], {"title": "a"}) is False
