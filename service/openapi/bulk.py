"""Component schemas of the bulk writes of one repository: the arrays each
route takes and the list of resources store and update answer. Named `<resource>.Bulk...`."""
from typing import Any

from service.config import Settings
from service.core.declarations.registry import Resource
from service.core.describing import schemas as attributes
from service.core.operations import bulk
from service.openapi.components import schema_ref
from service.openapi.resources import fields_for, name

Schema = dict[str, Any]
_ID = {"type": "string", "minLength": 1, "description": "The id of a record the user may see."}
_VERSION = {"type": "integer", "minimum": 0,
            "description": "The record's meta.version as read: if it has changed since, nothing is written (412)."}


def _array(items: Schema, settings: Settings, description: str) -> Schema:
    array: Schema = {"type": "array", "items": items, "minItems": 1, "description": description}
    limit = settings.cap("bulk", "max_items")
    if limit is not None:
        array["maxItems"] = limit
    return array


def schemas(resource: Resource, settings: Settings) -> dict[str, Schema]:
    n = resource.name
    patch = attributes.write_body(fields_for(resource, "patch"), "patch")
    update_item = {**patch, "properties": {bulk.ID: _ID, bulk.VERSION: _VERSION, **patch["properties"]},
                   "required": [bulk.ID, *patch.get("required", [])]}
    delete_item = {"type": "object", "required": [bulk.ID], "properties": {bulk.ID: _ID, bulk.VERSION: _VERSION}}
    return {
        name(n, "BulkStore"): _array(schema_ref(name(n, "Store")), settings,
                                     "The records to create; errors of item i are keyed \"<i>.<field>\"."),
        name(n, "BulkUpdateItem"): update_item,
        name(n, "BulkUpdate"): _array(schema_ref(name(n, "BulkUpdateItem")), settings,
                                      "Each: a record's id (and the version read), then only the fields to change."),
        name(n, "BulkDeleteItem"): delete_item,
        name(n, "BulkDelete"): _array({"oneOf": [_ID, schema_ref(name(n, "BulkDeleteItem"))]}, settings,
                                      "The ids of the records to delete, each alone or with the version read."),
        name(n, "List"): {"type": "object", "required": ["data"], "additionalProperties": False,
                          "properties": {"data": {"type": "array", "items": schema_ref(name(n, "Resource"))}}},
    }
