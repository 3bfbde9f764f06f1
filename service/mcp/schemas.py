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
from service.core.rules import MAX_TEXT, Rule, to_number
from service.core.validation import writable

Schema = dict[str, Any]
_NAME = re.compile(r"^\w+$")
_FORMATS = {"email": "email", "url": "uri"}
_PATTERN_NOTES = {
    "alpha": "letters only",
    "alpha_num": "letters and digits only",
    "alpha_dash": "letters, digits, dashes and underscores only",
}


def _json_type(field: Field, names: set[str]) -> str:
    # The same order as the validator's type check (service.core.rules.FieldRules._type_check).
    if field.kind == "boolean" or "boolean" in names:
        return "boolean"
    if "integer" in names:
        return "integer"
    if field.kind == "numeric" or "numeric" in names:
        return "number"
    return "string"


def _enum_value(value: str, json_type: str) -> Any:
    number = to_number(value) if json_type in ("number", "integer") else None
    return number if number is not None else value


def attribute_schema(field: Field, action: str) -> Schema:
    """One writable attribute under the rules of `action` ("store" or "update")."""
    rules = [Rule.parse(text) for text in field.rules_for("store" if action == "store" else "update")]
    names = {rule.name for rule in rules}
    json_type = _json_type(field, names)
    schema: Schema = {"type": json_type}
    notes: list[str] = []
    has_max = False
    for rule in rules:
        if rule.name in ("max", "min", "between") and json_type in ("string", "number", "integer"):
            has_max = has_max or rule.name in ("max", "between")
            _size(schema, rule, json_type)
        elif rule.name in ("in", "not_in") and json_type != "boolean":
            values = [_enum_value(v, json_type) for v in rule.params]
            schema.update({"enum": values} if rule.name == "in" else {"not": {"enum": values}})
        elif rule.name in _FORMATS:
            schema["format"] = _FORMATS[rule.name]
        elif rule.name in _PATTERN_NOTES:
            notes.append(_PATTERN_NOTES[rule.name])
        elif rule.name == "unique":
            notes.append("must be unique")
        elif rule.name == "exists":
            column = rule.params[1] if len(rule.params) > 1 and rule.params[1] else "id"
            notes.append(f"the {column} of an existing {rule.params[0]} record")
        elif rule.name == "confirmed":
            notes.append(f"send the same value as {field.name}_confirmation")
    if field.is_text and json_type == "string" and not has_max:
        schema["maxLength"] = MAX_TEXT  # the validator's implicit ceiling for text
    if field.kind == "date" or "date" in names:
        notes.append("an ISO 8601 date or date-time")
    if field.kind == "password":
        notes.append("write-only, never returned")
    if "required" in names and json_type == "string":
        schema["minLength"] = max(1, schema.get("minLength", 1))  # blank counts as missing
    if field.is_nullable or "nullable" in names:
        schema["type"] = [json_type, "null"]
    if field.has_default and action == "store":
        schema["default"] = field.default_value
    label = field.name.replace("_", " ").capitalize()
    schema["description"] = label + (f": {'; '.join(notes)}." if notes else ".")
    return schema


def _size(schema: Schema, rule: Rule, json_type: str) -> None:
    bounds = [to_number(p) for p in rule.params]
    low = bounds[0] if rule.name in ("min", "between") else None
    high = bounds[-1] if rule.name in ("max", "between") else None
    if json_type == "string":
        if low is not None:
            schema["minLength"] = int(low)
        if high is not None:
            schema["maxLength"] = int(high)
    else:
        if low is not None:
            schema["minimum"] = low
        if high is not None:
            schema["maximum"] = high


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
    for field in writable(fields):
        schema = attribute_schema(field, action)
        properties[field.name] = schema
        rules = {Rule.parse(text).name for text in field.rules_for(action)}
        if action == "store" and "required" in rules:
            required.append(field.name)
        if "confirmed" in rules:
            properties[f"{field.name}_confirmation"] = {
                "type": schema["type"], "description": f"The {field.name.replace('_', ' ')} again, to confirm it."}
            if action == "store" and "required" in rules:
                required.append(f"{field.name}_confirmation")
    return _object(properties, required)


def delete_schema(resource: Resource) -> Schema:
    return _object({"id": _id(f"The id of the {resource.name} record to delete.")}, ["id"])
