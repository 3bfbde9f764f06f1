"""JSON Schemas for tool arguments, read off the same field declarations and rule strings
the validator compiles, so what an agent is told matches what the operations accept.

Schemas describe; they never decide. The operations validate every call again, and
their 422/400 bodies are what an agent sees when it sends something the schema forbids.
"""
import re
from typing import Any

from service.config import Settings
from service.core.fields import Field
from service.core.query import RESERVED
from service.core.registry import Resource
from service.core.schemas import (
    CURRENT_PASSWORD, asks_current_password, confirmation_schema, current_password_schema, input_schema, is_required,
    parsed_rules,
)
from service.core.validation import writable

Schema = dict[str, Any]
_NAME = re.compile(r"^\w+$")


def _object(properties: dict[str, Schema], required: list[str]) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _id(description: str) -> Schema:
    return {"type": "string", "minLength": 1, "description": description}


def include_schema(resource: Resource, max_depth: int, nested: bool) -> Schema | None:
    names = sorted(resource.relations)
    if not names:
        return None
    text = f"Comma-separated relations to load into `relationships`: {', '.join(names)}."
    if nested and max_depth > 1:
        text += f" Dotted paths load nested relations (e.g. {names[0]}.<relation>), up to {max_depth} levels."
    return {"type": "string", "description": text}


def _matchable_schema(field: Field) -> Schema:
    json_type = {"numeric": "number", "boolean": "boolean"}.get(field.kind, "string")
    return {"type": [json_type, "null"],
            "description": f"Only records whose {field.name} equals this value exactly (null: records without one)."}


def sort_schema(fields: list[Field]) -> Schema:
    sortable = [f.name for f in fields if f.is_sortable] + ["id"]
    example = f"-{sortable[0]},id" if len(sortable) > 1 else "-id"
    schema: Schema = {"type": "string",
                      "description": f"Comma-separated fields to sort by, '-' first for descending (e.g. '{example}'); "
                                     f"sortable: {', '.join(sortable)}. Ties are broken by id."}
    if all(_NAME.match(name) for name in sortable):
        one = f"[-+]?(?:{'|'.join(sortable)})"
        schema["pattern"] = f"^{one}(?:,{one})*$"
    return schema


def index_schema(resource: Resource, fields: list[Field], settings: Settings) -> Schema:
    default_size = resource.per_page or int(settings.get("pagination", "per_page") or 15)
    cap = settings.max_per_page
    per_page = f"Records per page (default {min(default_size, cap) if cap else default_size}"
    per_page += f"; at most {cap}, a larger value is clamped)." if cap else ")."
    properties: dict[str, Schema] = {
        "page": {"type": "integer", "minimum": 1, "default": 1, "description": "The page to return, from 1."},
        "perPage": {"type": "integer", "minimum": 1, "description": per_page},
    }
    searchable = [f.name for f in fields if f.is_searchable]
    if searchable:
        limit = int(settings.get("query", "max_search_length") or 255)
        properties["search"] = {"type": "string", "maxLength": limit,
                                "description": f"Case-insensitive text searched in: {', '.join(searchable)}."}
    properties["sort"] = sort_schema(fields)
    include = include_schema(resource, int(settings.get("query", "max_related_depth") or 3), nested=True)
    if include:
        properties["include"] = include
    for field in fields:
        if field.is_matchable and field.name not in RESERVED:
            properties[field.name] = _matchable_schema(field)
    return _object(properties, [])


def show_schema(resource: Resource, settings: Settings) -> Schema:
    properties = {"id": _id(f"The id of the {resource.name} record to return.")}
    include = include_schema(resource, int(settings.get("query", "max_related_depth") or 3), nested=True)
    if include:
        properties["include"] = include
    return _object(properties, ["id"])


def profile_schema(resource: Resource | None, settings: Settings) -> Schema:
    include = include_schema(resource, int(settings.get("query", "max_related_depth") or 3), nested=True) \
        if resource is not None else None
    return _object({"include": include} if include else {}, [])


def write_schema(fields: list[Field], action: str) -> Schema:
    """Store: every writable attribute, required ones listed. Update: the id, then any attributes."""
    properties: dict[str, Schema] = {"id": _id("The id of the record to change.")} if action == "update" else {}
    required: list[str] = ["id"] if action == "update" else []
    mode = "store" if action == "store" else "patch"  # the update tool changes only what it is sent
    for field in writable(fields):
        properties[field.name] = input_schema(field, mode)
        needed = is_required(field, mode)
        if needed:
            required.append(field.name)
        if any(rule.name == "confirmed" for rule in parsed_rules(field, mode)):
            properties[f"{field.name}_confirmation"] = confirmation_schema(field, mode)
            if needed:
                required.append(f"{field.name}_confirmation")
    if asks_current_password(fields, mode):
        properties[CURRENT_PASSWORD] = current_password_schema()
    return _object(properties, required)


def delete_schema(resource: Resource) -> Schema:
    return _object({"id": _id(f"The id of the {resource.name} record to delete.")}, ["id"])
