"""JSON Schemas for tool arguments: the parameters and bodies `service.core` describes for every door,
as JSON objects an agent fills in.

Schemas describe; they never decide. The operations validate every call again, and
their 422/400 bodies are what an agent sees when it sends something the schema forbids.
"""
from typing import Any

from service.config import Settings
from service.core.fields import Field
from service.core.parameters import filter_schema, filtered, include_schema, per_page_schema, search_schema, sort_schema
from service.core.registry import Resource
from service.core.schemas import write_body

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
    search = search_schema(fields, settings)
    if search:
        properties["search"] = search
    properties["sort"] = sort_schema(fields)
    properties = _with_include(properties, resource, settings)
    for field in filtered(fields):
        properties[field.name] = filter_schema(field, json_null=True)
    return _object(properties, [])


def show_schema(resource: Resource, settings: Settings) -> Schema:
    properties = {"id": _id(f"The id of the {resource.name} record to return.")}
    return _object(_with_include(properties, resource, settings), ["id"])


def profile_schema(resource: Resource | None, settings: Settings) -> Schema:
    return _object(_with_include({}, resource, settings), [])


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
    if confirm:
        properties["confirm"] = confirm_schema()
    return _object(properties, ["id"])


def object_schema(properties: dict[str, Schema], required: list[str]) -> Schema:
    """Tool arguments: an object with these properties and no others."""
    return _object(properties, required)
