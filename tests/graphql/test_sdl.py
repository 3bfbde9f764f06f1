"""A schema built from its text: the text is parsed and checked once, each schema is built anew."""
import pytest
from graphql import GraphQLError, GraphQLObjectType, graphql_sync

from service.graphql.sdl import schema_from_sdl

SDL = """
scalar Long

type Query {
  views: Long
  title: String
}
"""


def test_each_schema_from_one_text_is_its_own_and_binds_its_own_resolvers():
    first, second = schema_from_sdl(SDL), schema_from_sdl(SDL)
    assert first is not second
    query = first.query_type
    assert isinstance(query, GraphQLObjectType)
    query.fields["title"].resolve = lambda *_: "bound on the first"

    assert graphql_sync(first, "{ title }").data == {"title": "bound on the first"}
    assert graphql_sync(second, "{ title }").data == {"title": None}


def test_long_is_coerced_in_a_schema_from_text():
    schema = schema_from_sdl(SDL)
    assert schema.query_type is not None
    schema.query_type.fields["views"].resolve = lambda *_: 3_000_000_000
    assert graphql_sync(schema, "{ views }").data == {"views": "3000000000"}


@pytest.mark.parametrize("text, message", [
    ("type Query { a: Missing }", "Unknown type 'Missing'."),
    ("type Query { a: String", "Syntax Error: Expected Name, found <EOF>."),
])
def test_a_broken_text_is_refused_every_time(text, message):
    for _ in range(2):  # a refusal is not kept: the same text is checked again, and refused again
        with pytest.raises((GraphQLError, TypeError)) as raised:
            schema_from_sdl(text)
        assert message in str(raised.value)
