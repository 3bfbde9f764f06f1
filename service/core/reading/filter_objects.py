"""Typed filter objects: the filter GraphQL's `<Type>Filter` and the MCP index tool's `filter` take,

    {"views": {"gte": 10, "lt": 100}, "published": {"eq": True}, "title": {"in": ["a", "b"]},
     "body": {"isNull": True}, "due": {"between": ["2024-01-01", "2024-01-31"]}}

read into the same exact matches and conditions as REST's `<field>[op]=v` (`service.core.reading.query`), with
the operators each field's description allows and the same rules (a date-only upper bound includes
its day; `isNull` is REST's `null`). Values are typed (JSON, GraphQL), not query-string texts.

A door puts the object in `context.extras[FILTER]`; `index_query` reads a context's parameters and
its object into one `IndexQuery`, for the index and for live feeds alike. Every refusal is a
BadRequest naming `filter.<field>` or `filter.<field>.<op>`.
"""
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from service.config import Settings
from service.core.declarations import Context, Description, Field, describe, to_boolean
from service.core.kernel import (BY_OBJECT_NAME, FLAG, LIST, for_type, refuse, refuse_field, refuse_operator,
                                 refuse_shape)
from service.core.reading.query import IndexQuery, conditions_of, max_in_values, parse_index

if TYPE_CHECKING:
    from service.core.declarations import Resource

FILTER = "filter"  # the key of `Context.extras` that holds a door's filter object


def object_operators(description: Description) -> list[str]:
    """The operator names a field's filter object takes (`Operator.object_name`), in the table's order."""
    return [op.object_name for op in for_type(description.type)]


def index_query(resource: "Resource", fields: list[Field], context: Context, settings: Settings,
                params: dict[str, str] | None = None) -> IndexQuery:
    """The index query of a context: its parameters (`params`, else the context's) as REST reads them,
    and its filter object."""
    given = context.params if params is None else params
    query = parse_index(resource, fields, given, settings, context.extras.get("repeated") or {})
    apply_filter(query, fields, context.extras.get(FILTER), max_in_values(settings))
    return query


def apply_filter(query: IndexQuery, fields: list[Field], given: Any, most: int | None = None) -> None:
    """Adds the filter object `given` (None: no filter) to `query`; filters combine with AND.
    `most`: the most values an `in` / `nin` list may hold."""
    if given is None:
        return
    if not isinstance(given, Mapping):
        refuse(FILTER, "The filter must be an object of fields.")
    by_name = {f.name: f for f in fields if f.is_matchable}
    for name, operations in given.items():
        field = by_name.get(name)
        if field is None:
            refuse_field(f"{FILTER}.{name}", name, by_name)
        if operations is None:
            continue
        if not isinstance(operations, Mapping):
            refuse(f"{FILTER}.{name}", f"The filter of {name!r} must be an object of operators, e.g. {{\"eq\": ...}}.")
        description = describe(field)
        for operator, value in operations.items():
            _add(query, description, operator, value, most)


def _add(query: IndexQuery, description: Description, operator: str, value: Any, most: int | None) -> None:
    name = description.name
    label = f"{FILTER}.{name}.{operator}"
    allowed = object_operators(description)
    if operator not in allowed:
        refuse_operator(label, operator, name, allowed)
    entry = BY_OBJECT_NAME[operator]
    # Described under the label, so every refusal of a value names where it was sent.
    labelled = replace(description, name=label)
    if entry.exact:
        value = labelled.coerce_value(value)
        if name not in query.equals:
            query.equals[name] = value
        else:  # two exact values for one field (a door's argument and the object): both must hold
            query.conditions.append((name, "in", (value,)))
        return
    if entry.arity is FLAG:
        flag = to_boolean(value)
        if flag is None:
            refuse_shape(label, entry.arity.typed_shape)
        items: list[Any] = [flag]
    elif entry.arity.size == 1:
        items = [value]
    elif not isinstance(value, (list, tuple)) or entry.arity.size not in (None, len(value)):
        refuse_shape(label, entry.arity.typed_shape)
    else:
        items = list(value)
    found = conditions_of(labelled, entry, items, labelled.coerce_value, most)
    query.conditions.extend((name, condition, bound) for _, condition, bound in found)


def as_parameters(given: Any) -> list[tuple[str, str]]:
    """A (valid) filter object as REST's bracket parameters, for the links of an answer:
    `{"views": {"between": [1, 5]}}` is `views[between]=1,5`; list members are repeated parameters."""
    pairs: list[tuple[str, str]] = []
    for name, operations in (given or {}).items():
        for operator, value in (operations or {}).items():
            entry = BY_OBJECT_NAME[operator]
            key = f"{name}[{entry.name}]"
            if entry.arity is LIST:
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

