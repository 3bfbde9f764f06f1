"""The tool list, built from whatever registry the app serves right now.

Each repository whose `mcp` capability names an operation gets `<resource>-<operation>-tool`;
the user repository's "profile" gives `<users>-profile-tool`; a signed-in caller also gets
`tokens-list-tool` and `tokens-revoke-tool` for their own tokens (creating one is left to REST and
GraphQL: a secret shown in an agent's context is a secret spread). A caller is offered only the
tools its token's abilities allow (`needed`). Nothing here is cached: a swapped registry (live
reload) changes the next tools/list and the next tools/call.
"""
import logging
import re
from dataclasses import dataclass

from mcp import types

from service.core.declarations.abilities import READ, WRITE, ability
from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.declarations.registry import Resource
from service.core.describing import AGGREGATE_ANSWER
from service.core.operations import attaching
from service.core.reading.serializer import TIMESTAMPS, visible
from service.mcp import attaching as relation_tools, bulk, extensions, guard, schemas

log = logging.getLogger("restify.mcp")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_ERRORS = ('Errors come back as a result with isError true and the REST API\'s JSON body, e.g. '
           '{"message": "This action is unauthorized."} or, for invalid data, '
           '{"message": "The given data was invalid.", "errors": {"<field>": ["<message>", ...]}}.')
TOKEN_TOOLS = {"tokens-list-tool": "tokens-list", "tokens-revoke-tool": "tokens-revoke"}  # name -> operation


@dataclass(frozen=True)
class ToolRoute:
    """Which operation a tool name runs, on which resource (and which action or getter, by its key)."""
    name: str
    resource: str
    operation: str
    key: str = ""


def routes(app: Restify) -> dict[str, ToolRoute]:
    """Tool name -> route, from the current registry (cheap: no fields are built)."""
    found: dict[str, ToolRoute] = {}
    user_repository = app.settings.get("auth", "user_repository")
    for resource in app.registry.resources.values():
        for operation in type(resource.repository).mcp_operations():
            if operation == "profile" and resource.name != user_repository:
                continue  # the profile is the authenticated user's own record
            if operation in attaching.OPERATIONS and not attaching.many_relations(resource):
                continue  # nothing to attach to
            named = extensions.tool_routes(resource, operation) if operation in ("actions", "getters") \
                else [(f"{resource.name}-{operation}-tool", operation, "")]
            if operation == "delete" and resource.soft_deletes:
                named.append((f"{resource.name}-restore-tool", "restore", ""))
            for name, runs, key in named:
                if not _TOOL_NAME.match(name):
                    log.warning("%r cannot be an MCP tool name; skipped", name)
                    continue
                found[name] = ToolRoute(name, resource.name, runs, key)
    for name, operation in TOKEN_TOOLS.items():
        found.setdefault(name, ToolRoute(name, "", operation))
    return found


def needed(route: ToolRoute) -> str | None:
    """The ability a tool's operation needs of the caller's token (None: the caller's own profile and tokens)."""
    if route.operation == "profile" or route.operation in TOKEN_TOOLS.values():
        return None
    kind = READ if route.operation in ("index", "show", "aggregate", extensions.GETTER) else \
        route.key if route.operation == extensions.ACTION else WRITE
    return ability(route.resource, kind)


def definitions(app: Restify, user: Model | None) -> list[types.Tool]:
    """The tools this user is offered, with input schemas from the fields as this user sees them."""
    tools: list[types.Tool] = []
    for route in sorted(routes(app).values(), key=lambda r: r.name):
        if guard.turned_off(app.settings, route.operation):
            continue  # not offered, and refused when called
        if route.operation in TOKEN_TOOLS.values():
            if user is not None:  # a guest has no tokens
                tools.append(_token_tool(route))
            continue
        resource = app.registry.get(route.resource)
        if resource is None:
            continue
        try:
            action = "patch" if route.operation == "update" else route.operation  # the update tool patches
            context = Context(door="mcp", user=user, action=action)
            need = needed(route)
            if need is not None and not context.can(need):
                continue  # the token may not call it (and would be refused: MissingAbility)
            tools.append(_definition(app, resource, route, context))
        except Exception:  # one broken repository must not hide every other tool
            log.exception("cannot describe MCP tool %s; skipped", route.name)
    return tools


def _definition(app: Restify, resource: Resource, route: ToolRoute, context: Context) -> types.Tool:
    settings = app.settings
    prefix = settings.get("server", "prefix").rstrip("/")
    if route.operation in extensions.OPERATIONS:
        title, text, schema, hints = extensions.definition(app, resource, route, context)
        return _tool(route, title, text + " " + _ERRORS, schema, hints)
    fields = resource.fields(context)
    name = resource.name
    shape = _resource_shape(resource, fields)
    relations = sorted(resource.relations)
    include = f" Relations you can include: {', '.join(relations)}." if relations else ""
    if route.operation == "index":
        matchable = [f.name for f in fields if f.is_matchable]
        searchable = [f.name for f in fields if f.is_searchable]
        text = (f"List {name} records a page at a time (the REST API's GET {prefix}/{name}). Returns "
                '{"meta": {"current_page", "from", "last_page", "path", "per_page", "to", "total", "next_cursor", '
                '"prev_cursor"}, "links": {"first", "last", "prev", "next", "path"}, "data": [' + shape + ", ...]}."
                + (f" search looks in: {', '.join(searchable)}." if searchable else "")
                + (f" Exact filters: {', '.join(matchable)}." if matchable else "")
                + (' filter takes operators per field, e.g. {"' + matchable[0] + '": {"ne": null}}; see its schema.'
                   if matchable else "")
                + " For deep or changing lists, page with cursor: start with cursor \"\" and pass meta.next_cursor "
                  "as cursor until it is null (keep the other arguments). count \"none\" skips the total."
                + include + " Only records you may see are listed.")
        return _tool(route, f"List {name}", text + " " + _ERRORS, schemas.index_schema(resource, fields, settings))
    if route.operation == "aggregate":
        text = (f"Count and sum {name} records by group (GET {prefix}/{name}/aggregate), among those the index "
                f"tool would list with the same search and filter. Returns {AGGREGATE_ANSWER}.")
        return _tool(route, f"Aggregate {name}", text + " " + _ERRORS,
                     schemas.aggregate_schema(resource, fields, settings))
    if route.operation == "show":
        text = (f"One {name} record by id (GET {prefix}/{name}/<id>). Returns " + '{"data": ' + shape + "}."
                + include + (" Each included list holds at most relatablePerPage (default "
                             f"{settings.get('pagination', 'relatable_per_page')}) records." if relations else ""))
        return _tool(route, f"Show one of {name}", text + " " + _ERRORS,
                     schemas.show_schema(resource, settings))
    if route.operation == "store":
        text = (f"Create a {name} record (POST {prefix}/{name}) from the attributes given; they are validated "
                f"like the REST API's. Returns " + '{"data": ' + shape + "} of the new record."
                + _server_set(fields, "store"))
        return _tool(route, f"Create {name}", text + " " + _ERRORS, schemas.write_schema(fields, "store"))
    if route.operation == "update":
        text = (f"Change a {name} record by id (PATCH {prefix}/{name}/<id>): only the attributes you send are "
                "validated and changed. Returns " + '{"data": ' + shape + "} of the changed record."
                + _server_set(fields, "update"))
        return _tool(route, f"Update {name}", text + " " + _ERRORS, schemas.write_schema(fields, "update"))
    if route.operation == "delete":
        text = (f"Delete a {name} record by id (DELETE {prefix}/{name}/<id>). Returns "
                '{"deleted": true, "id": "<id>"}.')
        if resource.soft_deletes:
            text += (f" The record is trashed: {name}-restore-tool brings it back. force: true deletes it for "
                     "good (trashed or not), always in the two steps below.")
        confirm = guard.confirming(settings, route.operation)
        if confirm or resource.soft_deletes:
            text += guard.two_steps('"action", "ids", "records"')
        return _tool(route, f"Delete {name}", text + " " + _ERRORS,
                     schemas.delete_schema(resource, confirm or resource.soft_deletes))
    if route.operation == "restore":
        text = (f"Restore a trashed {name} record by id (POST {prefix}/{name}/<id>/restore). Returns "
                '{"data": ' + shape + "} of the restored record. Find trashed records with the index tool's "
                'trashed: "only".')
        return _tool(route, f"Restore {name}", text + " " + _ERRORS, schemas.restore_schema(resource))
    if route.operation in attaching.OPERATIONS:
        return _tool(route, f"{route.operation.title()} {name} relations",
                     relation_tools.description(resource, route.operation, settings, shape) + " " + _ERRORS,
                     relation_tools.schema(resource, route.operation, settings))
    if route.operation in bulk.OPERATIONS:
        title, text, schema = bulk.describe(resource, route.operation, fields, shape, settings,
                                            guard.confirming(settings, route.operation))
        return _tool(route, title, text + " " + _ERRORS, schema)
    text = (f"The authenticated user's own {name} record (GET {prefix}/profile). Returns the resource "
            f"unwrapped: {shape}." + include)
    return _tool(route, "Your profile", text + " " + _ERRORS, schemas.profile_schema(resource, settings))


def _token_tool(route: ToolRoute) -> types.Tool:
    shape = ('{"id", "name", "abilities": [...], "created_at", "last_used_at", "expires_at", '
             '"current": true for the token of this connection}')
    if route.operation == "tokens-list":
        return _tool(route, "Your tokens", "The bearer tokens of the signed-in user (never their secrets). Returns "
                     '{"data": [' + shape + ", ...]}. " + _ERRORS, {"type": "object", "properties": {}})
    return _tool(route, "Revoke one of your tokens",
                 "Revoke one of the signed-in user's tokens by id (from tokens-list-tool); whoever holds it is "
                 'signed out. Revoking the current token ends this connection\'s access. Returns {"revoked": true, '
                 '"id": "<id>"}. ' + _ERRORS,
                 {"type": "object", "properties": {"id": {"type": "string", "description": "The token's id."}},
                  "required": ["id"]})


def _resource_shape(resource: Resource, fields: list) -> str:
    attributes = ", ".join(f'"{f.name}"' for f in visible(fields)) + ", " + ", ".join(f'"{t}"' for t in TIMESTAMPS)
    return ('{"id", "type": "' + resource.name + '", "attributes": {' + attributes + '}, '
            + ('"relationships"?, ' if resource.relations else "")
            + '"meta": {"authorizedToShow", "authorizedToStore", "authorizedToUpdate", "authorizedToDelete", '
              '"version"}}')


def _server_set(fields: list, action: str) -> str:
    """What an agent cannot send: attributes the server fills, read-only ones, and files."""
    automatic = [f.name for f in fields if f.value_callback is not None]
    readonly = [f.name for f in fields if f.is_readonly and f.value_callback is None and not f.is_file]
    files = [f.name for f in fields if f.is_file]
    notes = []
    if automatic and action == "store":
        notes.append(f" Set by the server: {', '.join(automatic)}.")
    elif automatic:
        readonly = automatic + readonly
    if readonly:
        notes.append(f" Read-only: {', '.join(readonly)}.")
    if files:
        notes.append(f" Files ({', '.join(files)}) cannot be sent here; upload them with a multipart POST "
                     "to the REST API.")
    return "".join(notes)


def _tool(route: ToolRoute, title: str, description: str, input_schema: dict,
          hints: guard.Hints | None = None) -> types.Tool:
    hints = hints or guard.hints(route.operation)
    return types.Tool(
        name=route.name,
        title=title,
        description=description,
        input_schema=input_schema,
        annotations=types.ToolAnnotations(title=title, read_only_hint=hints.read_only,
                                          destructive_hint=hints.destructive, idempotent_hint=hints.idempotent,
                                          open_world_hint=False),
    )

