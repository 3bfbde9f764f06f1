"""Validation of query documents, large ones in a process of their own.

graphql-core's validation can take time that grows with the square of the fields (OverlappingFieldsCanBeMerged
compares same-named fields pairwise, fragments included even where never spread): 1,600 tokens within every
size limit take about half a second. In a thread it would still hold the interpreter lock most of that time
and slow every request served meanwhile, so a document of more than `INLINE_TOKENS` tokens is validated in a
worker process (one, started on first use; documents queue for it). Smaller ones, a few milliseconds at
most, are validated on the spot.
"""
import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from graphql import DocumentNode, GraphQLFormattedError, GraphQLSchema, parse, validate

from service.graphql.sdl import schema_from_sdl

INLINE_TOKENS = 300
VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"

_pool: ProcessPoolExecutor | None = None
_schemas: dict[str, GraphQLSchema] = {}  # in the worker: the schema of the SDL text last sent


def refusal_body(formatted: GraphQLFormattedError) -> dict[str, Any]:
    """A formatted error that refuses the document before anything ran, with its code."""
    body: dict[str, Any] = dict(formatted)
    body.setdefault("extensions", {"code": VALIDATION_FAILED})
    return body


def _errors(schema: GraphQLSchema, document: DocumentNode) -> list[dict[str, Any]]:
    return [refusal_body(error.formatted) for error in validate(schema, document)]


def _validate_in_worker(sdl: str, query: str) -> list[dict[str, Any]]:
    schema = _schemas.get(sdl)
    if schema is None:
        _schemas.clear()
        schema = _schemas[sdl] = schema_from_sdl(sdl)
    return _errors(schema, parse(query))  # parsed within the limits by the server already


def _tokens(document: DocumentNode, most: int) -> int:
    """The document's tokens, counted up to `most` + 1."""
    count, token = 0, document.loc.start_token if document.loc else None
    while token is not None and count <= most:
        count, token = count + 1, token.next
    return count


async def validation_errors(schema: GraphQLSchema, sdl: str, query: str,
                            document: DocumentNode) -> list[dict[str, Any]]:
    """The validation errors of a parsed document, as response bodies; `sdl` is the schema's text."""
    global _pool
    if _tokens(document, INLINE_TOKENS) <= INLINE_TOKENS:
        return _errors(schema, document)
    if _pool is None:
        # spawn, not fork: the server has threads (the database driver's), which a fork would copy mid-work
        _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return await asyncio.wrap_future(_pool.submit(_validate_in_worker, sdl, query))
    except BrokenProcessPool:
        _pool = None  # the worker died (killed, out of memory): the next document starts a new one
        raise

