"""MCP tools of actions and getters: `<r>-<key>-action-tool` per action and `<r>-<key>-getter-tool`
per getter, for repositories whose `mcp` names "actions" / "getters".

An action tool takes the action's payload fields, and `ids` (or `all`, with `where` for the index
filters) when it runs on records from the collection, or `id` (and `version`) when it is offered on
single records only. A destructive action previews the records it would run on (ids and versions)
and runs only when called again with the confirmation (`[mcp] confirm_destructive`), at those versions.
A getter tool takes `id` where the getter is offered on records.
"""
from collections.abc import Callable
from typing import Any, cast

from service.config import Settings
from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.declarations.registry import Resource
from service.core.describing.parameters import filter_schema, filtered, search_schema
from service.core.describing.schemas import write_body
from service.core.kernel.errors import NotFound
from service.core.operations import actions, getters
from service.core.operations.extensions import Extension, offered
from service.core.reading.filter_objects import FILTER, query_text
from service.core.writing.writes import expected_versions
from service.mcp import guard
from service.mcp.schemas import confirm_schema, filter_member, id_schema, object_schema, version_schema

Schema = dict[str, Any]
ACTION, GETTER = "action", "getter"
OPERATIONS = (ACTION, GETTER)
_KINDS = {"actions": (ACTION, "actions", actions.Action), "getters": (GETTER, "getters", getters.Getter)}
# What an action tool's arguments hold besides the payload.
_SELECTION = ("ids", "all", "where", "id", "version", guard.CONFIRM)


def _declared(resource: Resource, operation: str, context: Context) -> list[Extension]:
    _, method, kind = _KINDS[operation]
    # On the collection where offered there, else on single records.
    return [*offered(resource, method, kind, context, on_record=False),
            *(item for item in offered(resource, method, kind, context, on_record=True) if not item.on_index)]


def tool_routes(resource: Resource, operation: str) -> list[tuple[str, str, str]]:
    """(tool name, ACTION or GETTER, key) for each action or getter the repository declares."""
    kind = _KINDS[operation][0]
    return [(f"{resource.name}-{item.key}-{kind}-tool", kind, item.key)
            for item in _declared(resource, operation, Context(door="mcp", action="tools"))]


def _find(resource: Resource, route: Any, context: Context) -> Extension:
    found = next((item for item in _declared(resource, f"{route.operation}s", context) if item.key == route.key), None)
    if found is None:
        raise NotFound()
    return found


def definition(app: Restify, resource: Resource, route: Any, context: Context
               ) -> tuple[str, str, Schema, guard.Hints]:
    """(title, description, input schema, hints) of one tool."""
    item = _find(resource, route, context)
    prefix = app.settings.get("server", "prefix").rstrip("/")
    if route.operation == GETTER:
        where = f"GET {prefix}/{resource.name}" + (f"/getters/run/{item.key}" if item.on_index
                                                   else f"/<id>/getters/{item.key}")
        text = (f"The {item.name} getter of {resource.name} ({where}): read-only. Returns "
                '{"data": <what it computes>}.' + (" Give id for one record." if item.on_record else ""))
        return item.name, text, _getter_schema(resource, cast(getters.Getter, item)), guard.hints(GETTER)
    action = cast(actions.Action, item)  # not a getter's route: an action's
    confirm = _confirming(app.settings, action)
    on = "without records" if action.standalone else \
        ("on the records given as ids, or all (narrowed by where)" if action.on_index else "on one record (id)")
    text = (f"The {action.name} action of {resource.name} (POST {prefix}/{resource.name}/actions?action={action.key}), "
            f"run {on}, as you: each record must be one you may run it on, or nothing runs. Returns "
            '{"data": <what the action answers>} or {"data": {"affected": <records>}}.')
    if confirm:
        text += " It is destructive." + guard.two_steps('"action", "ids", "versions"')
    hints = guard.Hints(read_only=False, destructive=action.destructive, idempotent=False)
    return action.name, text, _action_schema(app.settings, resource, action, context, confirm), hints


def _confirming(settings: Settings, action: actions.Action) -> bool:
    return guard.confirms(settings, action.destructive)  # the action's own flag, not its operation's


def _action_schema(settings: Settings, resource: Resource, action: actions.Action, context: Context,
                   confirm: bool) -> Schema:
    body = write_body(action.fields(context), "store")
    properties, required = dict(body["properties"]), list(body.get("required", []))
    if action.standalone:
        pass
    elif action.on_index:
        fields = resource.fields(context)
        where = {f.name: filter_schema(f, json_null=True) for f in filtered(fields)}
        where = {**filter_member(fields, resource), **where}  # the index tool's typed filter object
        search = search_schema(fields, settings)
        if search:
            where = {"search": search, **where}
        properties["ids"] = {"type": "array", "minItems": 1, "items": id_schema(f"A {resource.name} id."),
                             "description": f"The {resource.name} records to run the action on."}
        properties["all"] = {"type": "boolean", "description": (
            f"true: every {resource.name} record you may see (narrowed by where), instead of ids.")}
        properties["where"] = {**object_schema(where, []), "description": "With all: the index filters that narrow it."}
    else:
        properties["id"] = id_schema(f"The {resource.name} record to run the action on.")
        properties["version"] = version_schema
        required.append("id")
    if confirm:
        properties[guard.CONFIRM] = confirm_schema()
    return object_schema(properties, required)


def _getter_schema(resource: Resource, getter: getters.Getter) -> Schema:
    if not getter.on_record:
        return object_schema({}, [])
    text = f"The {resource.name} record to compute it for" + ("; leave it out for the collection." if getter.on_index
                                                               else ".")
    return object_schema({"id": id_schema(text)}, [] if getter.on_index else ["id"])


async def call(app: Restify, route: Any, arguments: dict[str, Any], user: Model | None,
               context: Callable[..., Context]) -> dict[str, Any]:
    """Runs the tool `route` names with `arguments`; `context(params)` makes the caller's context."""
    if route.operation == GETTER:
        id = arguments.get("id")
        return await getters.run(app, route.resource, route.key, context(), None if id is None else query_text(id))
    sent = dict(arguments)
    values = {k: v for k, v in arguments.items() if k not in _SELECTION}
    where = dict(arguments["where"]) if isinstance(arguments.get("where"), dict) else {}
    given = where.pop(FILTER, None)  # the typed filter object, as the index tool takes it
    if arguments.get("all") is True:
        values[actions.SELECTION] = actions.ALL
    elif "ids" in arguments:
        values[actions.SELECTION] = arguments["ids"]
    id = arguments.get("id")
    prepared = await actions.prepare(
        app, route.resource, route.key, values, context({k: query_text(v) for k, v in where.items()}, "", given),
        None if id is None else query_text(id), expected_versions(arguments.get("version")), paced=False)
    # Paced when it runs: a preview writes nothing, and an action confirmed after one is one write.
    if not _confirming(app.settings, prepared.action):
        return await actions.paced_run(prepared)
    versions = prepared.current_versions()

    async def run() -> dict[str, Any]:
        prepared.at_versions(versions)  # a record changed since the preview is refused inside its write
        return await actions.paced_run(prepared)

    preview = {"action": route.key, "ids": list(versions), "versions": versions}
    return await guard.confirm_or_preview(app, route.name, sent, user, {k: str(v) for k, v in versions.items()},
                                          run, preview, f"run {prepared.action.name}")
