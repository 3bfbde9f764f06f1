"""The filter operators are one table (`service.core.kernel.operators`). These tests walk it: every entry a
field's type allows is read alike by REST's brackets, the filter objects of GraphQL and MCP and a
policy's scope, documented by OpenAPI, MCP and GraphQL, compiled by storage and tested by the matcher,
so a new entry is checked on every door without a new test."""
import re

import pytest

from service import field
from service.core.declarations.context import Context
from service.core.declarations.scopes import admits, compile_alternatives
from service.core.describing.parameters import operator_schemas
from service.core.kernel.errors import BadRequest
from service.core.kernel.matching import satisfies
from service.core.kernel.operators import (
    BY_OBJECT_NAME,
    CONDITIONS,
    EXACT,
    FLAG,
    LIST,
    NAME,
    OPERATORS,
    PAIR,
    Operator,
    for_type,
)
from service.core.reading.filter_objects import FILTER, index_query
from service.core.reading.query import parse_index
from service.graphql.config import GraphQLConfig
from service.graphql.generator import _scalar
from service.graphql.index_types import IndexTypes
from service.mcp.schemas import filter_object_schema
from storage import Filter
from storage import filters as storage_filters
from tests.core.test_filter_objects import SETTINGS, Posts

# Per value type: a matchable field, and a value of it as JSON and as a query string carry it.
SAMPLES = {
    "integer": (field("f").rules("integer").matchable(), 5, "5"),
    "number": (field("f").numeric().matchable(), 2.5, "2.5"),
    "date": (field("f").date().matchable(), "2024-01-02", "2024-01-02"),
    "string": (field("f").matchable(), "a", "a"),
    "boolean": (field("f").boolean().matchable(), True, "true"),
}
CASES = [(value_type, op) for value_type in SAMPLES for op in for_type(value_type)]


def values(op: Operator, value, text):
    """`op`'s value as a filter object takes it, and as a query string carries it."""
    if op.arity is FLAG:
        return True, "true"
    if op.arity.size == 1:
        return value, text
    count = op.arity.size or 2
    return [value] * count, ",".join([text] * count)


def rest(declared, name: str, text: str):
    return parse_index(Posts(), [declared], {name: text}, SETTINGS, {})


def typed(declared, operator: str, given):
    return index_query(Posts(), [declared], Context(extras={FILTER: {"f": {operator: given}}}), SETTINGS)


@pytest.mark.parametrize("value_type, op", CASES, ids=[f"{t}-{op.name}" for t, op in CASES])
def test_every_door_reads_each_operator_the_table_allows(value_type, op):
    declared, value, text = SAMPLES[value_type]
    given, sent = values(op, value, text)
    query = rest(declared, f"f[{op.name}]", sent)
    other = typed(declared, op.object_name, given)
    assert (query.equals, query.conditions) == (other.equals, other.conditions)
    assert (query.equals == {"f": value}) is op.exact
    assert all(condition in CONDITIONS for _, condition, _ in query.conditions)
    # storage compiles the conditions and the matcher tests them
    assert Filter(equals=query.equals, conditions=tuple(query.conditions)).to_mongo() is not None
    assert satisfies(query.conditions, {"f": value}) in (True, False)
    # a policy's scope takes the operator under the same name
    [alternative] = compile_alternatives("Policy", [{"f": {op.name: given}}])
    assert set(alternative["f"]) == set(op.becomes) and admits((alternative,), {"f": value}) in (True, False)


@pytest.mark.parametrize("value_type", sorted(SAMPLES))
def test_every_document_lists_the_operators_the_table_allows(value_type):
    declared = SAMPLES[value_type][0]
    allowed = for_type(value_type)
    assert list(operator_schemas(declared)) == [op.name for op in allowed if not op.exact]  # OpenAPI
    schema = filter_object_schema([declared])["properties"]["f"]["properties"]  # MCP
    assert list(schema) == [op.object_name for op in allowed]
    config = GraphQLConfig()
    graphql = IndexTypes(lambda f: _scalar(f, config), 15).record_filter("T", [declared]).fields["f"].type
    assert list(graphql.fields) == [op.object_name for op in allowed]
    for op in allowed:
        kind = str(graphql.fields[op.object_name].type)
        assert kind.startswith("[") == (op.arity in (LIST, PAIR)) and (kind == "Boolean") == (
            op.arity is FLAG or value_type == "boolean")


def test_storage_compiles_exactly_the_tables_conditions():
    """Storage holds the one MongoDB mapping of the conditions the table's operators become."""
    assert set(CONDITIONS) - {EXACT} == storage_filters.OPERATIONS
    assert {name for name, condition in CONDITIONS.items() if condition.many} == storage_filters.LISTS
    for op in OPERATORS.values():
        assert set(op.becomes) <= set(CONDITIONS)
        assert len(op.becomes) == (op.arity.size if op.arity is PAIR else 1)
    assert len(BY_OBJECT_NAME) == len(OPERATORS)


def test_every_name_has_the_shape_a_query_string_reads():
    """`<field>[<op>]` reads only letters between the brackets (so `views[$gt]` or `views[g-t]` is refused
    as a shape before any name is looked up): an entry's names must have that shape to be reachable."""
    for op in OPERATORS.values():
        assert re.fullmatch(NAME, op.name) and re.fullmatch(NAME, op.object_name), op


@pytest.mark.parametrize("query, where", [("f[like]=1", "f[like]"), ("f[isNull]=true", "f[isNull]")])
def test_rest_and_the_filter_objects_refuse_an_operator_in_one_message(query, where):
    """REST once said only "... is not allowed on the field 'f'."; the objects also named what it takes."""
    name, _, text = query.partition("=")
    with pytest.raises(BadRequest) as raised:
        rest(SAMPLES["integer"][0], name, text)
    operators = ", ".join(op.name for op in for_type("integer"))
    given = where[2:-1]
    message = f"The filter operator {given!r} is not allowed on the field 'f'; it takes {operators}."
    assert raised.value.body() == {"message": message, "errors": {where: [message]}}
    with pytest.raises(BadRequest) as raised:
        typed(SAMPLES["integer"][0], "null", True)
    names = ", ".join(op.object_name for op in for_type("integer"))
    message = f"The filter operator 'null' is not allowed on the field 'f'; it takes {names}."
    assert raised.value.body() == {"message": message, "errors": {"filter.f.null": [message]}}
