"""Path items and schemas of actions and getters (service/core/operations/actions.py, getters.py), for the
repositories that declare any: listing and running them on the collection and on one record.

`POST <r>/actions?action=<key>` is one operation for every action of the collection, so its body
holds `repositories` and the payload fields of all of them (each action's own fields, and which are
required, are in its listing: GET <r>/actions); likewise on one record."""
from typing import Any

from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.registry import Resource
from service.core.describing.schemas import write_body
from service.core.operations import actions, getters
from service.core.operations.extensions import offered
from service.openapi import parameters
from service.openapi.components import error_responses, json_content, paced, schema_ref

Schema = dict[str, Any]
_CONTEXT = Context(door="rest", action="actions")  # what `actions(context)` sees while the document is built
_IF_MATCH = {"name": "If-Match", "in": "header", "required": False, "schema": {"type": "string"},
             "description": 'The ETag (version) read, e.g. "3": the action runs only if the record is still at '
                            "that version (strong comparison), else 412. Without it the action runs."}


def _declared(resource: Resource, on_record: bool) -> tuple[list[actions.Action], list[getters.Getter]]:
    return (actions.available(resource, _CONTEXT, on_record),
            offered(resource, "getters", getters.Getter, _CONTEXT, on_record))


def has_extensions(resource: Resource) -> bool:
    return any(any(_declared(resource, on_record)) for on_record in (False, True))


def shared_schemas() -> dict[str, Schema]:
    described = {"type": "object", "required": ["key", "name", "standalone", "destructive", "fields"],
                 "additionalProperties": False, "properties": {
                     "key": {"type": "string"}, "name": {"type": "string"}, "standalone": {"type": "boolean"},
                     "destructive": {"type": "boolean"},
                     "fields": {"type": "object", "description": "The JSON Schema of the action's payload."}}}
    getter = {"type": "object", "required": ["key", "name"], "additionalProperties": False,
              "properties": {"key": {"type": "string"}, "name": {"type": "string"}}}
    return {
        "ActionList": _data({"type": "array", "items": described}),
        "ActionResult": _data({"type": "object", "description": (
            'What the action answered, or {"affected": <the number of records it ran on>}.')}),
        "GetterList": _data({"type": "array", "items": getter}),
        "GetterResult": _data({"description": "What the getter computed: any JSON value."}),
    }


def _data(schema: Schema) -> Schema:
    return {"type": "object", "required": ["data"], "additionalProperties": False, "properties": {"data": schema}}


def _payload(offered_actions: list[actions.Action], with_selection: bool) -> Schema:
    properties: Schema = {}
    if with_selection:
        properties["repositories"] = {"anyOf": [
            {"type": "array", "minItems": 1, "items": {"type": "string"}},
            {"type": "string", "enum": [actions.ALL]}],
            "description": 'The ids of the records to run the action on, or "all": every record you may see that '
                           "the query's index filters select. A standalone action takes none."}
    for action in offered_actions:
        for name, schema in write_body(action.fields(_CONTEXT), "store")["properties"].items():
            properties.setdefault(name, {**schema, "description": f"{action.key}: {schema.get('description', '')}"})
    return {"type": "object", "properties": properties}


def schemas(resource: Resource) -> dict[str, Schema]:
    n = resource.name
    return {f"{n}.ActionRun": _payload(_declared(resource, False)[0], True),
            f"{n}.RecordActionRun": _payload(_declared(resource, True)[0], False)}


def _operation(operation_id: str, tag: str, summary: str, ok: Schema, errors: tuple[int, ...],
               security: list[Schema], **extra: Any) -> Schema:
    return {"operationId": operation_id, "tags": [tag], "summary": summary, **extra, "security": security,
            "responses": {"200": {"description": "OK.", "content": json_content(ok)}, **error_responses(*errors)}}


def _key(name: str, where: str, keys: list[str]) -> Schema:
    schema: Schema = {"type": "string", "enum": keys} if keys else {"type": "string"}
    return {"name": name, "in": where, "required": True, "schema": schema,
            "description": "The key of the action or getter (kebab case of its class name, unless it says)."}


def paths(resource: Resource, settings: Settings, security: list[Schema]) -> dict[str, Schema]:
    n = resource.name
    prefix = str(settings.get("server", "prefix")).rstrip("/")
    index_actions, index_getters = _declared(resource, False)
    record_actions, record_getters = _declared(resource, True)
    record = [parameters.id_parameter(n)]

    def run_body(part: str) -> Schema:
        return {"required": False, "content": {"application/json": {"schema": schema_ref(f"{n}.{part}")}}}

    return {
        f"{prefix}/{n}/actions": {
            "get": _operation(f"{n}.actions", n, f"The actions of {n}", schema_ref("ActionList"), (403,), security),
            "post": _operation(f"{n}.runAction", n, "Run an action on records (or a standalone one)",
                               schema_ref("ActionResult"), (400, 403, 404, 413, 422, *paced(settings)), security,
                               parameters=[_key("action", "query", [a.key for a in index_actions])],
                               requestBody=run_body("ActionRun"))},
        f"{prefix}/{n}/{{id}}/actions": {
            "parameters": record,
            "get": _operation(f"{n}.recordActions", n, f"The actions of one {n} record", schema_ref("ActionList"),
                              (403, 404), security),
            "post": _operation(f"{n}.runRecordAction", n, "Run an action on one record", schema_ref("ActionResult"),
                               (400, 403, 404, 412, 413, 422, *paced(settings)), security,
                               parameters=[_key("action", "query", [a.key for a in record_actions]), _IF_MATCH],
                               requestBody=run_body("RecordActionRun"))},
        f"{prefix}/{n}/getters": {
            "get": _operation(f"{n}.getters", n, f"The getters of {n}", schema_ref("GetterList"), (403,), security)},
        # Not `<r>/getters/{key}` (still served): it would be ambiguous with `<r>/{id}/upload`, `<r>/{id}/getters`.
        f"{prefix}/{n}/getters/run/{{key}}": {
            "parameters": [_key("key", "path", [g.key for g in index_getters])],
            "get": _operation(f"{n}.getter", n, f"Run a getter of {n}", schema_ref("GetterResult"), (403, 404),
                              security)},
        f"{prefix}/{n}/{{id}}/getters": {
            "parameters": record,
            "get": _operation(f"{n}.recordGetters", n, f"The getters of one {n} record", schema_ref("GetterList"),
                              (403, 404), security)},
        f"{prefix}/{n}/{{id}}/getters/{{key}}": {
            "parameters": [*record, _key("key", "path", [g.key for g in record_getters])],
            "get": _operation(f"{n}.recordGetter", n, f"Run a getter on one {n} record", schema_ref("GetterResult"),
                              (403, 404), security)},
    }
