"""Typed filter objects: the filter GraphQL's `<Type>Filter` and the MCP index tool's `filter` take,

    {"views": {"gte": 10, "lt": 100}, "published": {"eq": True}, "title": {"in": ["a", "b"]},
     "body": {"isNull": True}, "due": {"between": ["2024-01-01", "2024-01-31"]}}

read into the same exact matches and conditions as REST's `<field>[op]=v` (`service.core.reading.query`), with
the operators each field's description allows and the same rules (a date-only upper bound includes
its day; `isNull` is REST's `null`). Values are typed (JSON, GraphQL), not query-string texts.

Filter objects join others: `{"any": [{...}, {...}]}` holds when one of them does, `{"all": [...]}` when
every one does, `{"not": {...}}` when it does not; they nest at most MAX_DEPTH deep and one filter holds
at most MAX_CONDITIONS operators. `any` and `not` become compound conditions
(`service.core.kernel.matching`), which storage compiles to `$or` / `$nor` and the live matcher tests alike.

A door puts the object in `context.extras[FILTER]` (REST sends it as `filter=<JSON>`); `index_query` reads
a context's parameters and its objects into one `IndexQuery`, for the index and for live feeds alike.
Every refusal is a BadRequest naming `filter.<field>` or `filter.<field>.<op>` (nested: `filter.any.0.<field>`).
"""
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from service.config import Settings
from service.core.declarations import Context, Description, Field, describe, to_boolean
from service.core.kernel import (ANY, BY_OBJECT_NAME, FLAG, LIST, NOT, Condition, for_type, refuse, refuse_field,
                                 refuse_operator, refuse_shape)
from service.core.reading.query import IndexQuery, conditions_of, max_in_values, parse_index
from service.core.reading.relation_filters import (HAS, HAS_NOT, existence, filterable_relations, relation_parameters,
                                                   target_fields, through)

if TYPE_CHECKING:
    from service.core.declarations import Resource

FILTER = "filter"  # the key of `Context.extras` that holds a door's filter object
COMPOUND_MEMBERS = ("all", "any", "not")  # a filter object's members that join other filter objects
MAX_DEPTH = 3        # the most any / all / not nest in one another
MAX_CONDITIONS = 50  # the most operators one filter object holds, nested ones included


def object_operators(description: Description) -> list[str]:
    """The operator names a field's filter object takes (`Operator.object_name`), in the table's order."""
    return [op.object_name for op in for_type(description.type)]


def index_query(resource: "Resource", fields: list[Field], context: Context, settings: Settings,
                params: dict[str, str] | None = None) -> IndexQuery:
    """The index query of a context: its parameters (`params`, else the context's) as REST reads them,
    and its filter object."""
    given = context.params if params is None else params
    repeated = context.extras.get("repeated") or {}
    query = parse_index(resource, fields, given, settings, repeated)
    most = max_in_values(settings)
    relation_parameters(query, resource, given, repeated, most)
    apply_filter(query, fields, filter_parameter(given), most, resource)
    apply_filter(query, fields, context.extras.get(FILTER), most, resource)
    return query


def filter_parameter(params: Mapping[str, str]) -> Any:
    """REST's `filter=<JSON>`: the filter object as a JSON text (None when not sent)."""
    text = params.get(FILTER)
    if text is None or text == "":
        return None
    try:
        return json.loads(text)
    except ValueError as error:
        refuse(FILTER, f"The filter parameter must be a JSON object: {error}.")


def apply_filter(query: IndexQuery, fields: list[Field], given: Any, most: int | None = None,
                 resource: "Resource | None" = None) -> None:
    """Adds the filter object `given` (None: no filter) to `query`; filters combine with AND.
    `most`: the most values an `in` / `nin` list may hold; `resource`: whose relations the object
    may filter through (`<relation>: {...}`, `has`, `hasNot`)."""
    if given is None:
        return
    _read(query, fields, given, _Reading(most, resource), FILTER, 0)


@dataclass
class _Reading:
    """What one filter object has used of its bounds so far."""
    most: int | None  # the most values of an `in` / `nin` list
    resource: "Resource | None" = None  # whose relations it filters through (None: none, inside one)
    related: bool = False  # inside a relation's member: its fields are the ones the relation declares
    count: int = 0    # conditions read (one per operator of a field)


def _read(query: IndexQuery, fields: list[Field], given: Any, reading: _Reading, label: str, depth: int) -> None:
    """Reads one filter object (at `label`, nested `depth` compounds deep) into `query`."""
    if not isinstance(given, Mapping):
        refuse(label, f"The {label} must be an object of fields.")
    by_name = {f.name: f for f in fields if f.is_matchable or reading.related}
    for name, operations in given.items():
        where = f"{label}.{name}"
        if name in COMPOUND_MEMBERS and name not in by_name:
            if operations is not None:
                _compound(query, fields, name, operations, reading, where, depth + 1)
            continue
        field = by_name.get(name)
        if field is None and reading.resource is not None and _through(query, reading, name, operations, where, depth):
            continue
        if field is None:
            through_names = [*filterable_relations(reading.resource), HAS, HAS_NOT] if reading.resource else []
            refuse_field(where, name, [*by_name, *COMPOUND_MEMBERS, *through_names])
        if operations is None:
            continue
        if not isinstance(operations, Mapping):
            refuse(where, f"The filter of {name!r} must be an object of operators, e.g. {{\"eq\": ...}}.")
        description = describe(field)
        for operator, value in operations.items():
            reading.count += 1
            if reading.count > MAX_CONDITIONS:
                refuse(FILTER, f"The filter may hold at most {MAX_CONDITIONS} conditions.")
            _add(query, description, operator, value, reading.most, where)


def _through(query: IndexQuery, reading: _Reading, name: str, given: Any, label: str, depth: int) -> bool:
    """`has` / `hasNot` (a relation name or a list of them), or `<relation>: {<field>: {...}}` (null: no
    filter, as for a field); False when `name` is neither."""
    resource = reading.resource
    assert resource is not None
    if given is None:
        return name in (HAS, HAS_NOT) or name in filterable_relations(resource)
    if name in (HAS, HAS_NOT):
        names = given if isinstance(given, list) else [given]
        query.conditions.extend(existence(resource, item, name == HAS_NOT, label) for item in names)
        return True
    relation = filterable_relations(resource).get(name)
    if relation is None:
        return False
    part = IndexQuery(per_page=1)
    inside = replace(reading, resource=None, related=True)  # no relation filter within one
    _read(part, target_fields(relation), given, inside, label, depth)
    reading.count = inside.count
    query.conditions.append(through(relation, part, label))
    return True


def _compound(query: IndexQuery, fields: list[Field], name: str, given: Any, reading: _Reading, label: str,
              depth: int) -> None:
    """`all: [...]` (each object ANDed), `any: [...]` (one of them holds) or `not: {...}` (it does not)."""
    if depth > MAX_DEPTH:
        refuse(label, f"The filter may nest any, all and not at most {MAX_DEPTH} deep.")
    if name == "not":
        query.conditions.append(("", NOT, _branch(fields, given, reading, label, depth)))
        return
    if not isinstance(given, list) or not given:
        refuse(label, f"The {label} must be a non-empty list of filter objects.")
    if name == "all":
        for index, member in enumerate(given):
            _read(query, fields, member, reading, f"{label}.{index}", depth)
        return
    branches = tuple(_branch(fields, member, reading, f"{label}.{index}", depth) for index, member in enumerate(given))
    query.conditions.append(("", ANY, branches))


def _branch(fields: list[Field], given: Any, reading: _Reading, label: str, depth: int) -> tuple[Condition, ...]:
    """One filter object as conditions (ANDed): its exact matches become one-value `in` lists."""
    part = IndexQuery(per_page=1)
    _read(part, fields, given, reading, label, depth)
    return (*((name, "in", (value,)) for name, value in part.equals.items()), *part.conditions)


def _add(query: IndexQuery, description: Description, operator: str, value: Any, most: int | None,
         where: str) -> None:
    name = description.name
    label = f"{where}.{operator}"
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
    `{"views": {"between": [1, 5]}}` is `views[between]=1,5`; list members are repeated parameters;
    any, all, not and the members that filter through relations go as `filter=<JSON>`."""
    pairs: list[tuple[str, str]] = []
    joined = {name: value for name, value in (given or {}).items() if _joined(name, value)}
    if joined:
        pairs.append((FILTER, json.dumps(joined, separators=(",", ":"), default=str)))
    for name, operations in (given or {}).items():
        if name in joined:
            continue
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


def _joined(name: str, value: Any) -> bool:
    """Whether a filter object's member goes whole into `filter=<JSON>`: a compound, `has` / `hasNot`,
    or a relation's filter (an object of fields, not of operators)."""
    return name in (*COMPOUND_MEMBERS, HAS, HAS_NOT) or (
        isinstance(value, Mapping) and any(isinstance(item, Mapping) for item in value.values()))


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

