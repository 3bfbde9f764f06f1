"""`Long`: the scalar of integer fields without a 32-bit bound.

GraphQL's `Int` stops at 2^31 - 1 and `Float` loses integers past 2^53, while REST stores any signed
64-bit integer. A `Long` is written in JSON as a string of digits ("3000000000"), which JavaScript
clients hold exactly; as input it takes that string or a plain integer.
"""
import math
import re
from typing import Any

from graphql import GraphQLError, GraphQLScalarType, GraphQLSchema, IntValueNode, StringValueNode, ValueNode
from graphql.language.printer import print_for_error
from graphql.pyutils import inspect

LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
_INTEGER = re.compile(r"^-?(?:0|[1-9][0-9]*)$")


def _integer(value: Any) -> int | None:
    """The integer a value stands for (an int, an integral float, a string of digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value) if len(value) <= 20 else LONG_MAX + 1  # longer ones are out of range anyway
    return None


def _in_range(number: int | None, shown: str, node: ValueNode | None = None) -> int:
    if number is None:
        raise GraphQLError(f"Long cannot represent non-integer value: {shown}", node)
    if not LONG_MIN <= number <= LONG_MAX:
        raise GraphQLError(f"Long cannot represent non 64-bit signed integer value: {shown}", node)
    return number


def _long(value: Any) -> int:
    number = _integer(value)
    if number is not None and LONG_MIN <= number <= LONG_MAX:
        return number
    return _in_range(number, inspect(value))  # the refusal; inspect() is costly, only errors pay it


def serialize_long(value: Any) -> str:
    return str(_long(value))


def coerce_long(value: Any) -> int:
    return _long(value)


def parse_long_literal(node: ValueNode, _variables: Any = None) -> int:
    number = _integer(node.value) if isinstance(node, (IntValueNode, StringValueNode)) else None
    return _in_range(number, print_for_error(node), node)


_COERCERS = {"coerce_output_value": serialize_long, "serialize": serialize_long,
             "coerce_input_value": coerce_long, "parse_value": coerce_long,
             "coerce_input_literal": parse_long_literal, "parse_literal": parse_long_literal}

GraphQLLong = GraphQLScalarType(
    "Long", description="A signed 64-bit integer, written in JSON as a string of digits; input also takes an integer.",
    coerce_output_value=serialize_long, coerce_input_value=coerce_long, coerce_input_literal=parse_long_literal)


def bind_scalars(schema: GraphQLSchema) -> GraphQLSchema:
    """Gives a schema read from SDL (where `scalar Long` is only a name) the coercion of `Long`."""
    found = schema.type_map.get("Long")
    if isinstance(found, GraphQLScalarType) and found is not GraphQLLong:
        for name, function in _COERCERS.items():
            setattr(found, name, function)
    return schema


# Any JSON value, as it is: the answers of actions and getters, and an action's payload.
GraphQLJSON = GraphQLScalarType(
    "JSON", description="Any JSON value (an object, a list, a string, a number, a boolean or null), as it is.")
