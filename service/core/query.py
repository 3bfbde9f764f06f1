"""Reads index and show parameters into plain values: pagination, search,
exact matches, sort, and the relation tree of `related`/`include`.

Every malformed value is a BadRequest naming the parameter, never a 500.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.config import Settings
from service.core.description import describe, to_number
from service.core.errors import BadRequest
from service.core.fields import Field

if TYPE_CHECKING:
    from service.core.registry import Resource

RESERVED = {"page", "perPage", "per_page", "relatablePerPage", "search", "sort", "related", "include"}
RelationTree = dict[str, "RelationTree"]


@dataclass
class IndexQuery:
    page: int = 1
    per_page: int = 15
    search: str = ""
    equals: dict[str, Any] = field(default_factory=dict)
    sort: list[tuple[str, int]] = field(default_factory=list)
    related: RelationTree = field(default_factory=dict)


def _positive_int(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    number = to_number(raw)
    if not isinstance(number, int) or number < 1:
        raise BadRequest(f"The {name} parameter must be a positive integer.", {name: [f"The {name} must be a positive integer."]})
    return number


def max_related_depth(settings: Settings) -> int:
    return int(settings.get("query", "max_related_depth") or 3)


def clamp(size: int, settings: Settings) -> int:
    cap = settings.max_per_page
    return min(size, cap) if cap else size


def per_page(params: Mapping[str, str], settings: Settings, default: int | None) -> int:
    default_size = default or int(settings.get("pagination", "per_page") or 15)
    name = "perPage" if "perPage" in params else "per_page"
    return clamp(_positive_int(params, name, default_size), settings)


def relatable_per_page(params: Mapping[str, str], settings: Settings) -> int:
    default_size = int(settings.get("pagination", "relatable_per_page") or 15)
    return clamp(_positive_int(params, "relatablePerPage", default_size), settings)


def check_parameter_names(params: Mapping[str, str]) -> None:
    for name in params:
        if "[" in name or "$" in name or "." in name:
            raise BadRequest(f"The query parameter {name!r} is not allowed: operators cannot be sent in a query.",
                             {name: ["Operators are not allowed in query parameters."]})


def parse_sort(raw: str, fields: list[Field]) -> list[tuple[str, int]]:
    sortable = {f.name for f in fields if f.is_sortable} | {"id"}
    keys: list[tuple[str, int]] = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        direction = -1 if part.startswith("-") else 1
        name = part.lstrip("-+")
        if name not in sortable:
            raise BadRequest(f"The field {name!r} is not sortable.", {"sort": [f"The field {name!r} is not sortable."]})
        if name not in (k for k, _ in keys):
            keys.append((name, direction))
    if "id" not in (k for k, _ in keys):
        keys.append(("id", 1))  # a stable tie-break: pages never overlap or skip records
    return keys


def parse_related(resource: "Resource", params: Mapping[str, str], max_depth: int) -> RelationTree:
    raw = params.get("related") or params.get("include") or ""
    tree: RelationTree = {}
    unknown: list[str] = []
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
                unknown.append(path)
                break
            node = node.setdefault(part, {})
            owner = relation.target
    if unknown:
        names = ", ".join(sorted(set(unknown)))
        raise BadRequest(f"Unknown relations: {names}.", {"related": [f"Unknown relations: {names}."]})
    return tree


def parse_index(resource: "Resource", fields: list[Field], params: Mapping[str, str],
                settings: Settings) -> IndexQuery:
    check_parameter_names(params)
    relatable_per_page(params, settings)  # malformed is a 400 here too, though index relations are uncapped
    query = IndexQuery(
        page=_positive_int(params, "page", 1),
        per_page=per_page(params, settings, resource.per_page),
        related=parse_related(resource, params, max_related_depth(settings)),
    )
    search = params.get("search", "")
    limit = int(settings.get("query", "max_search_length") or 255)
    if len(search) > limit:
        raise BadRequest(f"The search text may not be longer than {limit} characters.",
                         {"search": [f"The search may not be greater than {limit} characters."]})
    query.search = search.strip()
    by_name = {f.name: f for f in fields}
    for name, raw in params.items():
        if name in RESERVED:
            continue
        field_ = by_name.get(name)
        if field_ is not None and field_.is_matchable:
            query.equals[name] = describe(field_).coerce(raw)
    query.sort = parse_sort(params.get("sort", ""), fields)
    return query
