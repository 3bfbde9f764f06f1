"""A schema built from its text, the text parsed and checked once per process.

Every app built in a process (each worker's, each regeneration's, and each test's) builds its schema
from the generated SDL, and parsing and checking that text were more than half of building it (the
demo's took about 40 ms, 15-20 without them). Building a schema does not change the parsed document,
so the text's document is kept; the schema itself is built anew each time, since an app binds its own
resolvers to it.
"""
from functools import lru_cache

from graphql import DocumentNode, GraphQLSchema, build_ast_schema, parse
from graphql.validation.validate import assert_valid_sdl

from service.graphql.scalars import bind_scalars


@lru_cache(maxsize=4)
def _checked_document(sdl: str) -> DocumentNode:
    document = parse(sdl)
    assert_valid_sdl(document)  # raises on an invalid text, which is then not kept
    return document


def schema_from_sdl(sdl: str) -> GraphQLSchema:
    """A new schema from `sdl`, with `Long` bound to its coercion."""
    return bind_scalars(build_ast_schema(_checked_document(sdl), assume_valid_sdl=True))
