"""Reads index and show parameters into plain values: pagination, search,
exact matches and filters with operators, sort, counting, cursors, and the relation tree of
`related`/`include`.

Every malformed value is a BadRequest naming the parameter, never a 500.
"""
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.config import Settings
from service.core.declarations import Description, Field, describe, sort_keys, to_boolean, to_number
from service.core.kernel import (CONDITIONS, EXACT, FLAG, LIST, NAME, NEGATED, OPERATORS, RESERVED, BadRequest,
                                 Operator, choices, refuse, refuse_field, refuse_null, refuse_operator, refuse_shape)
from service.core.reading.ranking import relevance_sort
from service.core.reading.ranking import ranked, text_search  # noqa: F401 (admission reads them from here)

if TYPE_CHECKING:
    from service.core.declarations import Resource

RelationTree = dict[str, "RelationTree"]
# The one bracket shape a parameter name may have: `<field>[<op>]`, or `-<field>` for `ne`; `<relation>.<field>`
# in either (`sub`: the related field, `service.core.reading.relation_filters`).
FILTER_NAME = re.compile(rf"^(?P<negated>-)?(?P<field>[A-Za-z_][A-Za-z0-9_]*)(?:\.(?P<sub>[A-Za-z_][A-Za-z0-9_]*))?"
                         rf"(?:\[(?P<op>{NAME})\])?$", re.ASCII)
_ELSEWHERE = ("fields", "has")  # fields[<type>]: sparse fieldsets; has / -has: relation_filters
# `fields[<type>]` (sparse fieldsets, `service.core.reading.fieldsets`): the other bracket shape a name may have.
FIELDSET_NAME = re.compile(r"^fields\[(?P<type>[A-Za-z_][A-Za-z0-9_]*)\]$", re.ASCII)
_COUNTS = ("exact", "none")


@dataclass
class IndexQuery:
    per_page: int               # the page size asked for, else the repository's, else the setting's
    page: int = 1
    search: str = ""
    equals: dict[str, Any] = field(default_factory=dict)
    sort: list[tuple[str, int]] = field(default_factory=list)
    related: RelationTree = field(default_factory=dict)
    # (field, operation, value) in storage's vocabulary: ne gt gte lt lte in nin null
    conditions: list[tuple[str, str, Any]] = field(default_factory=list)
    counted: bool = True        # count=exact (default) or count=none
    cursor: str | None = None   # None: page mode; "" starts a cursor walk


def _positive_int(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    number = to_number(raw)
    if not isinstance(number, int) or number < 1:
        raise BadRequest(f"The {name} parameter must be a positive integer.",
                         {name: [f"The {name} must be a positive integer."]})
    return number


def max_in_values(settings: Settings) -> int | None:
    """The most values one `in` / `nin` filter may list (`query.max_in_values`; 0 or null: no cap)."""
    return settings.cap("query", "max_in_values")


def max_related_depth(settings: Settings) -> int:
    return int(settings.positive("query", "max_related_depth"))


def clamp(size: int, settings: Settings) -> int:
    cap = settings.max_per_page
    return min(size, cap) if cap else size


def per_page(params: Mapping[str, str], settings: Settings, default: int | None) -> int:
    default_size = default or int(settings.positive("pagination", "per_page"))
    name = "perPage" if "perPage" in params else "per_page"
    return clamp(_positive_int(params, name, default_size), settings)


def relatable_per_page(params: Mapping[str, str], settings: Settings) -> int:
    default_size = int(settings.positive("pagination", "relatable_per_page"))
    return clamp(_positive_int(params, "relatablePerPage", default_size), settings)


def check_parameter_names(params: Mapping[str, str]) -> None:
    for name in params:
        shaped = "[" in name or "]" in name or "." in name
        if "$" in name or (shaped and not (FILTER_NAME.match(name) or FIELDSET_NAME.match(name))):
            raise BadRequest(f"The query parameter {name!r} is not allowed: operators cannot be sent in a query.",
                             {name: ["Operators are not allowed in query parameters."]})


def relation_sorts(resource: "Resource") -> set[str]:
    """The `<relation>.<field>` sort keys a resource allows (`BelongsTo(...).sortable(...)`)."""
    return {f"{name}.{field_name}" for name, relation in resource.relations.items()
            for field_name in relation.sort_fields}


def parse_sort(raw: str, fields: list[Field], through: set[str] | None = None) -> list[tuple[str, int]]:
    """The sort keys, id last. `through`: the allowed `<relation>.<field>` keys; one may be given,
    first (it orders the parents; the other keys order each parent's records)."""
    keys: list[tuple[str, int]] = []
    sortable: set[str] | None = None  # worked out for the first key given (most requests give none)
    for part in (p.strip() for p in raw.split(",")) if raw else ():
        if not part:
            continue
        if sortable is None:
            sortable = set(sort_keys(fields)) | (through or set())
        direction = -1 if part.startswith("-") else 1
        name = part.lstrip("-+")
        if name not in sortable:
            message = f"The field {name!r} is not sortable; the sortable fields are: {choices(sortable)}."
            raise BadRequest(message, {"sort": [message]})
        if "." in name and keys:
            message = f"The related field {name!r} must come first in sort."
            raise BadRequest(message, {"sort": [message]})
        if name not in (k for k, _ in keys):
            keys.append((name, direction))
    if "id" not in (k for k, _ in keys):
        keys.append(("id", 1))  # a stable tie-break: pages never overlap or skip records
    return keys


def parse_related(resource: "Resource", params: Mapping[str, str], max_depth: int) -> RelationTree:
    raw = params.get("related") or params.get("include") or ""
    tree: RelationTree = {}
    unknown: dict[str, "Resource"] = {}  # each unknown path, with the repository it names no relation of
    for path in (p.strip() for p in raw.split(",")):
        if not path:
            continue
        parts = path.split(".")
        if len(parts) > max_depth:
            raise BadRequest(f"The relation path {path!r} is deeper than {max_depth} levels.",
                             {"related": [f"The relation path {path!r} is too deep."]})
        owner, node = resource, tree
        for part in parts:
            relation = owner.relations.get(part)
            if relation is None:
                unknown[path] = owner
                break
            node = node.setdefault(part, {})
            owner = relation.target
    if unknown:
        owners = {owner.name: owner for owner in unknown.values()}
        known = "; ".join(f"the relations of {name}: {choices(owners[name].relations)}" for name in sorted(owners))
        message = f"Unknown relations: {', '.join(sorted(unknown))} ({known})."
        raise BadRequest(message, {"related": [message]})
    return tree


def parse_index(resource: "Resource", fields: list[Field], params: Mapping[str, str],
                settings: Settings, repeated: Mapping[str, Sequence[str]] | None = None) -> IndexQuery:
    """`repeated`: every value of a parameter sent more than once (`status[in]=a&status[in]=b`)."""
    check_parameter_names(params)
    relatable_per_page(params, settings)  # malformed is a 400 here too, though index relations are uncapped
    query = IndexQuery(
        page=_positive_int(params, "page", 1),
        per_page=per_page(params, settings, resource.per_page),
        related=parse_related(resource, params, max_related_depth(settings)),
    )
    search = params.get("search", "")
    limit = int(settings.positive("query", "max_search_length"))
    if len(search) > limit:
        raise BadRequest(f"The search text may not be longer than {limit} characters.",
                         {"search": [f"The search may not be greater than {limit} characters."]})
    query.search = search.strip()
    parse_filters(query, fields, params, repeated or {}, max_in_values(settings))
    own_relevance = "relevance" in sort_keys(fields)  # a field of that name keeps its meaning
    relevance = set() if own_relevance or not any(f.is_text for f in fields) else {"relevance"}
    query.sort = parse_sort(params.get("sort", ""), fields, relation_sorts(resource) | relevance)
    count = params.get("count") or "exact"
    if count not in _COUNTS:
        raise BadRequest("The count parameter must be exact or none.", {"count": ["The count must be exact or none."]})
    query.counted = count == "exact"
    query.cursor = params.get("cursor")
    if relevance:
        relevance_sort(query, params)
    return query


def parse_filters(query: IndexQuery, fields: list[Field], params: Mapping[str, str],
                  repeated: Mapping[str, Sequence[str]], most: int | None = None) -> None:
    """`<field>=v` into `query.equals`; `<field>[op]=v` and `-<field>=v` into `query.conditions`.
    `most`: the most values an `in` / `nin` may list."""
    by_name = {f.name: f for f in fields}
    for name, raw in params.items():
        match = FILTER_NAME.match(name) if name not in RESERVED else None
        if match is None or match["field"] in _ELSEWHERE or match["sub"]:
            continue
        field_ = by_name.get(match["field"])
        if not match["negated"] and match["op"] is None:  # the plain exact match; unknown names are ignored
            if field_ is not None and field_.is_matchable:
                query.equals[name] = describe(field_).coerce(raw)
            continue
        if field_ is None or not field_.is_matchable:
            refuse_field(name, match["field"], (f.name for f in fields if f.is_matchable))
        parse_operator(query, describe(field_), name, match, raw, repeated.get(name), most)


def parse_operator(query: IndexQuery, description: Description, name: str, match: "re.Match[str]", raw: str,
                   values: Sequence[str] | None, most: int | None) -> None:
    """One `<field>[op]=v` or `-<field>=v` parameter (`name`, matched by FILTER_NAME) on the field
    `description` names, into `query`; a plain `<field>=v` when neither is given."""
    if match["negated"] and match["op"] is not None:
        refuse(name, f"The filter {name!r} cannot be both negated and given an operator.")
    given = match["op"] or (NEGATED.name if match["negated"] else EXACT)
    if given not in description.operators:
        refuse_operator(name, given, description.name, list(description.operators))
    entry = OPERATORS[given]
    if entry.exact:
        query.equals[description.name] = description.coerce(raw)
    else:
        query.conditions.extend(_conditions(description, entry, raw, values or [raw], most))


def _conditions(description: Description, entry: Operator, raw: str, values: Sequence[str],
                most: int | None) -> list[tuple[str, str, Any]]:
    where = f"{description.name}[{entry.name}]"
    if entry.arity is LIST:
        # Repeated parameters carry values with commas; one parameter is a comma list.
        items = values if len(values) > 1 else raw.split(",")
        return conditions_of(description, entry, items, most=most, label=where)
    if entry.arity is FLAG:
        flag = to_boolean(raw)
        if flag is None:
            refuse_shape(where, entry.arity.query_shape)
        return conditions_of(description, entry, [flag])
    items = raw.split(",") if entry.arity.size != 1 else [raw]
    if len(items) != entry.arity.size:
        refuse_shape(where, entry.arity.query_shape)
    return conditions_of(description, entry, items)


def conditions_of(description: Description, entry: Operator, items: Sequence[Any],
                  coerce: Callable[[Any], Any] | None = None, most: int | None = None,
                  label: str | None = None) -> list[tuple[str, str, Any]]:
    """The conditions of one operator (not an exact match) on its values, already split: every member
    of a list, each of a pair's values (between's low and high), the flag, else the one value. `coerce`
    reads a value (default: the query-string text reading of the description). A list longer than
    `most` is a 400 naming `label` (default: the description's name), before any value is read."""
    coerce = coerce or description.coerce
    name = description.name
    if entry.arity is LIST:
        if most is not None and len(items) > most:
            where = label or name
            refuse(where, f"The {where} filter may not have more than {most} values (query.max_in_values).")
        # each value once: the same set, however it was sent, binds a cursor alike
        return [(name, entry.becomes[0], tuple(dict.fromkeys(coerce(item) for item in items)))]
    if entry.arity is FLAG:
        return [(name, entry.becomes[0], items[0])]
    return [_bound(description, condition, item, coerce) for condition, item in zip(entry.becomes, items, strict=False)]


def _bound(description: Description, condition: str, raw: Any, coerce: Callable[[Any], Any]) -> tuple[str, str, Any]:
    value = coerce(raw)
    if value is None and not CONDITIONS[condition].takes_null:
        refuse_null(description.name)
    # A date-only bound stands for its whole day: <= that day is < the next; > it is >= the next.
    day_after = description.day_after(raw)
    next_day = CONDITIONS[condition].next_day
    if day_after is not None and next_day is not None:
        return description.name, next_day, day_after
    return description.name, condition, value
