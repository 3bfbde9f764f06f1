"""Typed filter objects: the filter GraphQL's `<Type>Filter` and the MCP index tool's `filter` take,

    {"views": {"gte": 10, "lt": 100}, "published": {"eq": True}, "title": {"in": ["a", "b"]},
     "body": {"isNull": True}, "due": {"between": ["2024-01-01", "2024-01-31"]}}

read into the same exact matches and conditions as REST's `<field>[op]=v` (`service.core.query`), with
the operators each field's description allows and the same rules (a date-only upper bound includes
its day; `isNull` is REST's `null`). Values are typed (JSON, GraphQL), not query-string texts.

A door puts the object in `context.extras[FILTER]`; `index_query` reads a context's parameters and
its object into one `IndexQuery`, for the index and for live feeds alike. Every refusal is a
BadRequest naming `filter.<field>` or `filter.<field>.<op>`.
"""
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from service.config import Settings
from service.core.context import Context
from service.core.description import Description, describe, to_boolean
from service.core.errors import BadRequest
from service.core.fields import Field
from service.core.query import IndexQuery, conditions_of, max_in_values, parse_index

if TYPE_CHECKING:
    from service.core.registry import Resource

FILTER = "filter"  # the key of `Context.extras` that holds a door's filter object
# The object's operator names -> the query language's (DESIGN §12): `isNull` is `null`.
OPERATOR_NAMES = {"eq": "eq", "ne": "ne", "gt": "gt", "gte": "gte", "lt": "lt", "lte": "lte", "in": "in",
                  "nin": "nin", "between": "between", "isNull": "null"}
_OBJECT_NAMES = {query: name for name, query in OPERATOR_NAMES.items()}


def object_operators(description: Description) -> list[str]:
    """The operator names a field's filter object takes, in the query language's order."""
    return [_OBJECT_NAMES[operator] for operator in description.operators]


def index_query(resource: "Resource", fields: list[Field], context: Context, settings: Settings) -> IndexQuery:
    """The index query of a context: its parameters as REST reads them, and its filter object."""
    query = parse_index(resource, fields, context.params, settings, context.extras.get("repeated") or {})
    apply_filter(query, fields, context.extras.get(FILTER), max_in_values(settings))
    return query


def apply_filter(query: IndexQuery, fields: list[Field], given: Any, most: int | None = None) -> None:
    """Adds the filter object `given` (None: no filter) to `query`; filters combine with AND.
    `most`: the most values an `in` / `nin` list may hold."""
    if given is None:
        return
    if not isinstance(given, Mapping):
        _refuse(FILTER, "The filter must be an object of fields.")
    by_name = {f.name: f for f in fields if f.is_matchable}
    for name, operations in given.items():
        field = by_name.get(name)
        if field is None:
            _refuse(f"{FILTER}.{name}", f"The field {name!r} cannot be filtered.")
        if operations is None:
            continue
        if not isinstance(operations, Mapping):
            _refuse(f"{FILTER}.{name}", f"The filter of {name!r} must be an object of operators, e.g. {{\"eq\": ...}}.")
        description = describe(field)
        for operator, value in operations.items():
            _add(query, description, operator, value, most)


def _add(query: IndexQuery, description: Description, operator: str, value: Any, most: int | None) -> None:
    name = description.name
    label = f"{FILTER}.{name}.{operator}"
    allowed = object_operators(description)
    if operator not in allowed:
        _refuse(label, f"The filter operator {operator!r} is not allowed on the field {name!r}; "
                       f"it takes {', '.join(allowed)}.")
    # Described under the label, so every refusal of a value names where it was sent.
    labelled = replace(description, name=label)
    if operator == "eq":
        value = labelled.coerce_value(value)
        if name not in query.equals:
            query.equals[name] = value
        else:  # two exact values for one field (a door's argument and the object): both must hold
            query.conditions.append((name, "in", (value,)))
        return
    operation = OPERATOR_NAMES[operator]
    if operation in ("in", "nin"):
        if not isinstance(value, (list, tuple)):
            _refuse(label, f"The {label} filter must be a list of values.")
        items: list[Any] = list(value)
    elif operation == "between":
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            _refuse(label, f"The {label} filter must be two values: [low, high].")
        items = list(value)
    elif operation == "null":
        flag = to_boolean(value)
        if flag is None:
            _refuse(label, f"The {label} filter must be true or false.")
        items = [flag]
    else:
        items = [value]
    found = conditions_of(labelled, operation, items, labelled.coerce_value, most)
    query.conditions.extend((name, condition, bound) for _, condition, bound in found)


def as_parameters(given: Any) -> list[tuple[str, str]]:
    """A (valid) filter object as REST's bracket parameters, for the links of an answer:
    `{"views": {"between": [1, 5]}}` is `views[between]=1,5`; list members are repeated parameters."""
    pairs: list[tuple[str, str]] = []
    for name, operations in (given or {}).items():
        for operator, value in (operations or {}).items():
            key = f"{name}[{OPERATOR_NAMES[operator]}]"
            if operator in ("in", "nin"):
                texts = [query_text(item) for item in value]
                # One value is read as a comma list: repeated, it keeps its commas.
                pairs.extend((key, text) for text in (texts * 2 if len(texts) == 1 and "," in texts[0] else texts))
            else:
                pairs.append((key, query_text(value)))
    return pairs


def query_text(value: Any) -> str:
    """A typed value as a query string carries it: lists comma-joined, null as `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join(query_text(item) for item in value)
    return json.dumps(value, separators=(",", ":"))


def _refuse(name: str, message: str) -> NoReturn:
    raise BadRequest(message, {name: [message]})
