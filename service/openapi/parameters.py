"""Query and path parameters of index, show and profile, as `service.core.query` reads them."""
import re
from typing import Any

from service.config import Settings
from service.core.fields import Field
from service.core.query import RESERVED
from service.core.registry import Resource
from service.core.rules import INT64

Schema = dict[str, Any]
MAX_LISTED_PATHS = 200  # above this many relation paths, `related` gets a generic pattern
_NAME = re.compile(r"^\w+$")


def _query(name: str, schema: Schema, description: str, **extra: Any) -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description, **extra}


def _count(name: str, description: str, **extra: Any) -> Schema:
    return _query(name, {"type": "integer", "minimum": 1, "maximum": INT64}, description, **extra)


def id_parameter(resource_name: str) -> Schema:
    return {"name": "id", "in": "path", "required": True,
            "schema": {"type": "string", "pattern": "^[0-9a-fA-F]{24}$"},
            "description": f"The id of a {resource_name} record (24 hex digits); any other value is a 404."}


def _max_depth(settings: Settings) -> int:
    return int(settings.get("query", "max_related_depth") or 3)


def relation_paths(resource: Resource, depth: int) -> list[str]:
    """Every dotted relation path from `resource`, at most `depth` levels deep."""
    paths: list[str] = []

    def walk(owner: Resource, prefix: str, left: int) -> None:
        for relation_name, relation in sorted(owner.relations.items()):
            path = f"{prefix}{relation_name}"
            paths.append(path)
            if left > 1 and len(paths) <= MAX_LISTED_PATHS:
                walk(relation.target, path + ".", left - 1)

    walk(resource, "", depth)
    return paths


def _list_pattern(items: list[str]) -> str:
    one = "(?:" + "|".join(re.escape(item) for item in items) + ")"
    return f"^{one}(?:,{one})*$"


def related_parameters(resource: Resource, settings: Settings) -> list[Schema]:
    """`related` and its alias `include`, with the allowed relation paths."""
    if not resource.relations:
        return []
    depth = _max_depth(settings)
    paths = relation_paths(resource, depth)
    direct = sorted(resource.relations)
    schema: Schema = {"type": "string"}
    if len(paths) <= MAX_LISTED_PATHS and all(_NAME.match(p.replace(".", "_")) for p in paths):
        schema["pattern"] = _list_pattern(paths)
    text = (f"Comma-separated relations to load into `relationships`: {', '.join(direct)}; dotted paths load "
            f"nested ones (e.g. {paths[-1] if '.' in paths[-1] else direct[0]}), at most {depth} levels. "
            "An unknown or too deep path is a 400.")
    return [_query("related", schema, text),
            _query("include", schema, "The same as `related` (used when `related` is absent).")]


def _page_size(resource: Resource, settings: Settings) -> str:
    default_size = resource.per_page or int(settings.get("pagination", "per_page") or 15)
    cap = settings.max_per_page
    text = f"Records per page (default {min(default_size, cap) if cap else default_size}"
    return text + (f"; at most {cap}: a larger value is clamped, not refused)." if cap else ").")


def relatable_parameter(settings: Settings, on_index: bool) -> Schema:
    default_size = int(settings.get("pagination", "relatable_per_page") or 15)
    text = (f"Records per has-many / belongs-to-many relation on show (default {default_size}"
            + (f", at most {settings.max_per_page}" if settings.max_per_page else "") + ").")
    if on_index:
        text += " Checked on index too, where relations are loaded whole."
    return _count("relatablePerPage", text)


def _matchable(field: Field) -> Schema:
    kind = {"numeric": "number", "boolean": "boolean"}.get(field.kind, "string")
    return _query(field.name, {"type": kind},
                  f"Only records whose {field.name} equals this value exactly (`null`: records without one).")


def sort_parameter(fields: list[Field]) -> Schema:
    sortable = [f.name for f in fields if f.is_sortable] + ["id"]
    schema: Schema = {"type": "string"}
    if all(_NAME.match(name) for name in sortable):
        one = f"[-+]?(?:{'|'.join(sortable)})"
        schema["pattern"] = f"^{one}(?:,{one})*$"
    return _query("sort", schema, f"Comma-separated fields, '-' first for descending; sortable: "
                                  f"{', '.join(sortable)}. Ties are broken by id. Any other field is a 400.")


def index_parameters(resource: Resource, fields: list[Field], settings: Settings) -> list[Schema]:
    parameters = [
        _count("page", "The page to return, from 1 (default 1)."),
        _count("perPage", _page_size(resource, settings)),
        _count("per_page", "The same as `perPage` (used when `perPage` is absent).", deprecated=True),
        relatable_parameter(settings, on_index=True),
    ]
    searchable = [f.name for f in fields if f.is_searchable]
    if searchable:
        limit = int(settings.get("query", "max_search_length") or 255)
        parameters.append(_query("search", {"type": "string", "maxLength": limit},
                                 f"Case-insensitive text searched in: {', '.join(searchable)}."))
    parameters.append(sort_parameter(fields))
    parameters += related_parameters(resource, settings)
    parameters += [_matchable(f) for f in fields if f.is_matchable and f.name not in RESERVED]
    return parameters


def show_parameters(resource: Resource, settings: Settings) -> list[Schema]:
    return related_parameters(resource, settings) + [relatable_parameter(settings, on_index=False)]
