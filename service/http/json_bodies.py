"""JSON in and out of HTTP bodies, and the record versions an `If-Match` header accepts."""
import json
import re
from typing import Any

import orjson

from service.core.kernel.errors import BadRequest


class _NotJsonNumber(ValueError):
    """NaN, Infinity and -Infinity: Python's decoder takes them, JSON has no such numbers."""


def _reject_constant(name: str) -> Any:
    raise _NotJsonNumber(name)


def _not_json_reason(error: Exception) -> str:
    """Why a body is not JSON, in fixed words: not the decoder's positions nor Python's internals."""
    if isinstance(error, RecursionError):
        return ": it is nested too deeply."
    if isinstance(error, UnicodeDecodeError):
        return ": it is not UTF-8 text."
    if isinstance(error, _NotJsonNumber):
        return f": {error.args[0]} is not a JSON number."
    if isinstance(error, json.JSONDecodeError):
        return "."
    return ": a number in it has too many digits."  # int()'s limit on digits, the one other ValueError


def encode_json(body: Any) -> bytes:
    """Compact UTF-8 JSON. orjson is an order of magnitude faster than the standard encoder on
    a page of records; what it refuses (integers past 64 bits, strings with lone surrogates, which
    a JSON body can smuggle in as escapes) takes the standard path, escaped to ASCII."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, separators=(",", ":")).encode()


# `\ud800`-style escapes of surrogates: a pair decodes to one character, a lone one to a string
# that is not text (it cannot be stored or encoded as UTF-8). Looked for only when one may be there.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return found.group() if found else None
    if isinstance(value, dict):
        items: Any = (item for pair in value.items() for item in pair)
    elif isinstance(value, list):
        items = value
    else:
        return None
    return next((found for found in map(_lone_surrogate, items) if found), None)


# One entity tag of a header: `*`, `"x"` or `W/"x"` (the grammar Tornado reads If-None-Match with).
_ENTITY_TAG = re.compile(r'\*|(?:W/)?"[^"]*"')


def accepted_versions(if_match: str | None) -> frozenset[int] | None:
    """The record versions an `If-Match` header accepts: None (any) when it is absent or `*`.
    Comparison is strong: a weak tag (`W/"3"`) or one that is not a version never matches."""
    if if_match is None:
        return None
    tags = _ENTITY_TAG.findall(if_match)
    if "*" in tags:
        return None
    return frozenset(int(tag[1:-1]) for tag in tags if tag[1:-1].isdigit() and not tag.startswith("W/"))


def decode_json(body: bytes, what: str = "The request body") -> Any:
    """`body` as JSON; what is refused gets a fixed text naming `what`, never the decoder's own words."""
    try:
        value = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise BadRequest(f"{what} is not valid JSON{_not_json_reason(error)}") from None
    surrogate = _lone_surrogate(value) if _SURROGATE_ESCAPE.search(body) else None
    if surrogate:
        raise BadRequest(f"{what} is not valid JSON: a string holds a lone surrogate "
                         f"(\\u{ord(surrogate):04x}).")
    return value
