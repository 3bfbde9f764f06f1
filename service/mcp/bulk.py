"""The bulk tools: `<r>-bulk-store-tool`, `<r>-bulk-update-tool` and
`<r>-bulk-delete-tool`, each taking `{"items": [...]}` (tool arguments are objects). They run the bulk
operations: all or nothing, errors keyed `"<index>.<field>"`. Bulk delete is destructive: it goes
through the preview and confirmation of `guard`, bound to the versions of every record it names.
"""
from collections.abc import Callable
from typing import Any

from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.fields import Field
from service.core.declarations.models import Model
from service.core.declarations.registry import Resource
from service.core.operations import bulk
from service.mcp import guard, schemas

OPERATIONS = ("bulk-store", "bulk-update", "bulk-delete")
ITEMS = "items"
_ALL_OR_NOTHING = (" Every item is validated and authorized before anything is written, and either every item is "
                   "written or none is; errors of item i are keyed \"<i>.<field>\" (e.g. \"1.title\").")


def _items(item: schemas.Schema, settings: Settings, description: str) -> schemas.Schema:
    array: schemas.Schema = {"type": "array", "items": item, "minItems": 1, "description": description}
    limit = settings.cap("bulk", "max_items")
    if limit is not None:
        array["maxItems"] = limit
    return array


def describe(resource: Resource, operation: str, fields: list[Field], shape: str, settings: Settings,
             confirm: bool) -> tuple[str, str, schemas.Schema]:
    """(title, description, input schema) of one bulk tool."""
    name, prefix = resource.name, settings.get("server", "prefix").rstrip("/")
    if operation == "bulk-store":
        items = _items(schemas.write_schema(fields, "store"), settings, f"The {name} records to create.")
        text = (f"Create several {name} records at once (POST {prefix}/{name}/bulk). Returns "
                '{"data": [' + shape + ", ...]} in the order sent." + _ALL_OR_NOTHING)
        return f"Create several {name}", text, schemas.object_schema({ITEMS: items}, [ITEMS])
    if operation == "bulk-update":
        items = _items(schemas.write_schema(fields, "update"), settings,
                       "Each: the id of a record, its version as read (optional), and only the attributes to change.")
        text = (f"Change several {name} records at once (POST {prefix}/{name}/bulk/update): only the attributes sent "
                "are changed. Returns " + '{"data": [' + shape + ", ...]}." + _ALL_OR_NOTHING
                + " A version that is no longer the record's refuses the whole call.")
        return f"Update several {name}", text, schemas.object_schema({ITEMS: items}, [ITEMS])
    ids = _items({"type": "string", "minLength": 1}, settings, f"The ids of the {name} records to delete.")
    properties: dict[str, schemas.Schema] = {ITEMS: ids}
    text = (f"Delete several {name} records at once (DELETE {prefix}/{name}/bulk/delete). Returns "
            '{"deleted": true, "ids": [...]}; either every record is deleted or none is.')
    if confirm:
        properties[guard.CONFIRM] = schemas.confirm_schema()
        text += guard.two_steps('"action", "ids", "records"')
    return f"Delete several {name}", text, schemas.object_schema(properties, [ITEMS])


async def run(app: Any, tool: str, name: str, operation: str, arguments: dict[str, Any], user: Model | None,
              context: Callable[[], Context]) -> dict[str, Any]:
    items = arguments.get(ITEMS)
    if operation == "bulk-store":
        return await bulk.store_bulk(app, name, items, context())
    if operation == "bulk-update":
        return await bulk.update_bulk(app, name, items, context())

    async def delete(shown: dict[str, int | None]) -> dict[str, Any]:
        # What is not a list goes as it is: the operation refuses it with its own message.
        await bulk.delete_bulk(app, name, [_at(item, shown) for item in items] if isinstance(items, list) else items,
                               context())
        assert isinstance(items, list)  # delete_bulk refuses anything else
        return {"deleted": True, "ids": [_id(item) for item in items]}

    if not guard.confirming(app.settings, operation):
        return await delete({})
    records = await bulk.preview_delete(app, name, items, context())
    # At the versions it previewed: a change since is refused inside the delete itself.
    shown = {record["id"]: guard.shown_version(record) for record in records}
    return await guard.records_after_confirmation(app, tool, records, arguments, user, lambda: delete(shown))


def _id(item: Any) -> Any:
    return item.get(bulk.ID) if isinstance(item, dict) else item


def _at(item: Any, shown: dict[str, int | None]) -> Any:
    """The item, deleted at the version the preview showed unless it names its own."""
    if isinstance(item, dict):
        return item
    version = next((v for id, v in shown.items() if isinstance(item, str) and id == item.lower()), None)
    return item if version is None else {bulk.ID: item, bulk.VERSION: version}
