"""JSON Schemas for tool arguments: the parameters and bodies `service.core` describes for every door,
as JSON objects an agent fills in.

Schemas describe; they never decide. The operations validate every call again, and
their 422/400 bodies are what an agent sees when it sends something the schema forbids.
"""
from typing import Any

from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.description import describe
from service.core.declarations.fields import Field
from service.core.declarations.registry import Resource
from service.core.describing.parameters import (
    count_schema, cursor_schema, fields_schema, filter_schema, filtered, force_schema, include_schema,
    per_page_schema, relation_searches, search_schema, sort_schema, trashed_schema,
)
from service.core.describing.aggregates import aggregate_schemas
from service.core.describing.schemas import write_body
from service.core.kernel.operators import FLAG, Operator, for_type, object_text
from service.core.reading.relation_filters import HAS, HAS_NOT, existing_relations, filterable_relations, target_fields
from service.core.reading.filter_objects import FILTER
from service.core.reading.query import relation_sorts

Schema = dict[str, Any]


def _object(properties: dict[str, Schema], required: list[str]) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _id(description: str) -> Schema:
    return {"type": "string", "minLength": 1, "description": description}


def _with_include(properties: dict[str, Schema], resource: Resource | None, settings: Settings) -> dict[str, Schema]:
    include = include_schema(resource, settings) if resource is not None else None
    return {**properties, "include": include} if include else properties


def index_schema(resource: Resource, fields: list[Field], settings: Settings) -> Schema:
    properties: dict[str, Schema] = {
        "page": {"type": "integer", "minimum": 1, "default": 1, "description": "The page to return, from 1."},
        "perPage": per_page_schema(resource, settings),
    }
    search = search_schema(fields, settings, relation_searches(resource))
    if search:
        properties["search"] = search
    properties["sort"] = sort_schema(fields, sorted(relation_sorts(resource)))
    properties = _with_include(properties, resource, settings)
    properties["fields"] = fields_schema(resource, settings, Context(door="mcp", action="index"))
    properties["cursor"] = cursor_schema()
    properties["count"] = count_schema()
    if resource.soft_deletes:
        properties["trashed"] = trashed_schema()
    properties.update(filter_member(fields, resource))
    for field in filtered(fields):
        if field.name != FILTER:  # the filter object's name wins; {"filter": {"filter": {"eq": v}}} still works
            properties[field.name] = filter_schema(field, json_null=True)
    return _object(properties, [])


def aggregate_schema(resource: Resource, fields: list[Field], settings: Settings) -> Schema:
    """The aggregate tool's: `group`, `metrics`, `sort`, then what chooses the records, as the index's."""
    properties: dict[str, Schema] = aggregate_schemas(fields)
    search = search_schema(fields, settings, relation_searches(resource))
    if search:
        properties["search"] = search
    if resource.soft_deletes:
        properties["trashed"] = trashed_schema()
    properties.update(filter_member(fields, resource))
    return _object(properties, [])


def filter_member(fields: list[Field], resource: Resource) -> dict[str, Schema]:
    """`{"filter": <the filter object>}` when there is something to filter by, else nothing."""
    matchable = [f for f in fields if f.is_matchable]
    if not matchable and not _through_schemas(resource):
        return {}
    return {FILTER: filter_object_schema(matchable, resource)}


def filter_object_schema(fields: list[Field], resource: Resource | None = None) -> Schema:
    """`filter`: per matchable field, an object of the operators its description allows (the shape of
    GraphQL's `<Type>Filter`), read by `service.core.reading.filter_objects`; with `resource`, the
    members that filter through its relations too."""
    properties = {f.name: _operators_schema(f) for f in fields}
    properties.update({k: v for k, v in _through_schemas(resource).items() if k not in properties})
    nested: Schema = {"type": "object", "description": "A filter object of this same shape."}
    joined = {"all": {"type": "array", "items": nested, "minItems": 1, "description": "Every one of these holds."},
              "any": {"type": "array", "items": nested, "minItems": 1, "description": "One of these holds."},
              "not": {**nested, "description": "This filter object does not hold."}}
    properties.update({name: schema for name, schema in joined.items() if name not in properties})
    return {"type": "object", "additionalProperties": False, "properties": properties,
            "description": 'Filters with operators, combined with AND, e.g. {"<field>": {"gte": 10, "lt": 100}} or '
                           '{"<field>": {"in": ["a", "b"]}, "<other>": {"isNull": true}}. Each field takes only the '
                           "operators listed for it; anything else is a 400 naming filter.<field>.<op>. any, all and "
                           'not join filter objects: {"any": [{"<field>": {"eq": 1}}, {"not": {"<other>": '
                           '{"isNull": true}}}]}, at most 3 deep and with 50 operators in all.'}


def _through_schemas(resource: Resource | None) -> dict[str, Schema]:
    """`<relation>: {<field>: {...}}` per filterable BelongsTo, and `has` / `hasNot`."""
    if resource is None:
        return {}
    schemas: dict[str, Schema] = {}
    for name, relation in filterable_relations(resource).items():
        parent = {f.name: _operators_schema(f) for f in target_fields(relation)}
        schemas[name] = {**_object(parent, []), "description": f"Only records whose {name}, as you may see it, "
                                                               "matches these operators."}
    to_many = existing_relations(resource)
    if to_many:
        names: Schema = {"type": "array", "items": {"type": "string", "enum": to_many}, "minItems": 1}
        schemas[HAS] = {**names, "description": "Only records with at least one related record you may see in "
                                                "each of these relations."}
        schemas[HAS_NOT] = {**names, "description": "Only records with no related record you may see in each of "
                                                    "these relations."}
    return schemas


def _operators_schema(field: Field) -> Schema:
    description = describe(field)
    kind = description.json_type
    members: dict[str, Schema] = {}
    for op in for_type(description.type):
        members[op.object_name] = {**_object_value(op, kind), "description": object_text(op, description.type)}
    return _object(members, [])


def _object_value(op: Operator, kind: str) -> Schema:
    """What a filter object takes for `op`: one value (or null, where null is a value), a list, a pair, a flag."""
    if op.arity is FLAG:
        return {"type": "boolean"}
    if op.arity.size == 1:
        return {"type": [kind, "null"] if op.takes_null else kind}
    values: Schema = {"type": "array", "items": {"type": kind}}
    if op.arity.size is not None:
        values.update(minItems=op.arity.size, maxItems=op.arity.size)
    return values


def show_schema(resource: Resource, settings: Settings) -> Schema:
    properties = {"id": _id(f"The id of the {resource.name} record to return.")}
    properties = _with_include(properties, resource, settings)
    properties["fields"] = fields_schema(resource, settings, Context(door="mcp", action="show"))
    if resource.soft_deletes:
        properties["trashed"] = trashed_schema()
    return _object(properties, ["id"])


def profile_schema(resource: Resource | None, settings: Settings) -> Schema:
    properties = _with_include({}, resource, settings)
    if resource is not None:
        properties["fields"] = fields_schema(resource, settings, Context(door="mcp", action="profile"))
    return _object(properties, [])


# Optimistic concurrency: the update and delete tools take the version the agent read.
_VERSION: Schema = {"type": "integer", "minimum": 0,
                    "description": "The record's meta.version as you read it: the call fails (\"The record was "
                                   "changed since you read it.\") if it has changed since. Leave it out to write "
                                   "whatever the record holds now."}


def write_schema(fields: list[Field], action: str) -> Schema:
    """Store: every writable attribute, required ones listed. Update: the id, then any attributes."""
    body = write_body(fields, "store" if action == "store" else "patch")  # update changes only what it is sent
    if action != "update":
        return _object(body["properties"], body.get("required", []))
    return _object({"id": _id("The id of the record to change."), **body["properties"], "version": _VERSION},
                   ["id", *body.get("required", [])])


def confirm_schema() -> Schema:
    """The `confirm` argument of a destructive tool."""
    return {"type": "string", "minLength": 1, "description": (
        "The token a first call without it returned: send it only once your user has agreed to the preview.")}


def delete_schema(resource: Resource, confirm: bool = False) -> Schema:
    properties = {"id": _id(f"The id of the {resource.name} record to delete."), "version": _VERSION}
    if resource.soft_deletes:
        properties["force"] = {"type": "boolean", "description": force_schema()["description"]}
    if confirm:
        properties["confirm"] = confirm_schema()
    return _object(properties, ["id"])


def restore_schema(resource: Resource) -> Schema:
    return _object({"id": _id(f"The id of the trashed {resource.name} record to restore."), "version": _VERSION},
                   ["id"])


def relation_change_schema(resource: Resource, relations: list[str], operation: str, confirm: bool = False) -> Schema:
    """Attach, detach, sync: the record, one of its BelongsToMany `relations`, the related ids."""
    syncing = operation == "sync"
    properties = {
        "id": _id(f"The id of the {resource.name} record whose relation changes."),
        "relation": {"type": "string", "enum": relations, "description": "The relation to change."},
        "ids": {"type": "array", "items": _id("The id of a related record."), "minItems": 0 if syncing else 1,
                "description": "The ids of the related records" + (
                    " (the whole set; [] detaches every one you can see)." if syncing else ".")},
        "version": _VERSION,
    }
    if confirm:
        properties["confirm"] = confirm_schema()
    return _object(properties, ["id", "relation", "ids"])


def object_schema(properties: dict[str, Schema], required: list[str]) -> Schema:
    """Tool arguments: an object with these properties and no others."""
    return _object(properties, required)


# For the tool schemas built beside these (actions and getters: service/mcp/extensions.py).
id_schema, version_schema = _id, _VERSION
