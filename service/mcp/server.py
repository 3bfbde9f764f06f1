"""The MCP server: tools/list and tools/call over the operations layer.

Both transports (Streamable HTTP and stdio) share this server; they differ only in how
they say who is calling (`Caller`). A tool call builds the same Context a REST request
would — arguments become query parameters as strings, or the JSON body — calls the same
operation, and returns the same JSON. Domain errors come back as tool results with
`isError: true` and the REST API's body, never as protocol errors.
"""
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from service.core.declarations.app import Restify
from service.core.declarations.budget import Budget
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.kernel.answers import answer
from service.core.kernel.naming import RESERVED
from service.core.operations import aggregating, attaching, crud as operations, profile, tokens, trash
from service.core.reading.filter_objects import FILTER, query_text
from service.mcp import attaching as relation_tools, bulk, extensions, guard, limits
from service.mcp.tools import ToolRoute, definitions, routes

log = logging.getLogger("restify.mcp")
INSTRUCTIONS = ("Tools over this application's repositories. Each tool runs the same operation as the REST API, "
                "as the user whose bearer token authenticated this connection, so the same policies and "
                "validation apply; results are the REST API's JSON.")


@dataclass
class Caller:
    """Who a request comes from, as a transport found out."""
    user: Model | None
    base_url: str = ""   # scheme://host of the request, for pagination links; "" over stdio
    address: str | None = None  # the client's address over HTTP (a guest's expensive queries take turns by it)


CallerResolver = Callable[[ServerRequestContext[Any, Any]], Awaitable[Caller]]


def _version() -> str:
    try:
        return version("restify-python")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0"


def build_server(app: Restify, resolve_caller: CallerResolver) -> Server[Any]:
    """A low-level MCP server whose tools follow `app.registry` at every request."""

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            caller = await resolve_caller(ctx)
        except Exception as error:  # noqa: BLE001 - a fixed text, never the exception's own
            raise MCPError(types.INVALID_REQUEST, error_body(error, "tools/list")["message"]) from None
        return types.ListToolsResult(tools=definitions(app, caller.user))

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            caller = await resolve_caller(ctx)
        except Exception as error:  # noqa: BLE001 - a fixed text, never the exception's own
            return result(error_body(error, params.name), is_error=True)
        return await call(app, params.name, params.arguments or {}, caller)

    # No schema declares `x-mcp-header`, so there are no Mcp-Param-* headers to check; saying so spares
    # the SDK a whole tools/list on every 2026-era tools/call.
    return Server("restify", version=_version(), instructions=INSTRUCTIONS, get_tool_input_schema=lambda name: None,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def result(body: dict[str, Any], is_error: bool = False, limit: int | None = None,
           kept: tuple[int, int] | None = None) -> types.CallToolResult:
    """The REST body as text (for any client) and as structuredContent (for clients that read it),
    cut to `limit` bytes of text when one is given (`kept`: (records kept, records of the page) when
    the page was cut to fit while it was built)."""
    if kept is not None and limit is not None:
        body = limits.cut_page(body, kept[0], kept[1], limit)
    text = limits.dumps(body)
    if limit is not None and len(text.encode("utf-8")) > limit:
        fewer = limits.fewer_records(body, limit, kept[1] if kept is not None else None)
        if fewer is None:
            cut, note = limits.cut_text(text, limit)
            return types.CallToolResult(content=[types.TextContent(type="text", text=cut),
                                                 types.TextContent(type="text", text=note)], is_error=is_error)
        body, text = fewer, limits.dumps(fewer)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=body, is_error=is_error)


async def call(app: Restify, name: str, arguments: Mapping[str, Any], caller: Caller) -> types.CallToolResult:
    route = routes(app).get(name)
    if route is None:
        return result({"message": f"Unknown tool {name!r}; list the tools again."}, is_error=True)
    if guard.turned_off(app.settings, route.operation):
        return result({"message": f"This server is read-only: {name} is turned off."}, is_error=True)
    limit = app.settings.cap("mcp", "max_result_bytes")
    answer_limit = app.settings.max_response_bytes
    # An index page is cut while it is built; any other answer is refused past the answer's budget.
    spent = Budget(answer_limit, room=limits.room(limit, answer_limit) if limit and route.operation == "index"
                   else None)
    try:
        return result(await _run(app, route, dict(arguments), caller, spent), limit=limit, kept=spent.cut)
    except Exception as error:  # noqa: BLE001 - every failure is answered as a tool error
        return result(error_body(error, name), is_error=True)


def error_body(error: Exception, name: str) -> dict[str, Any]:
    """What a REST client would get for `error`: core's answer, a fixed text for a fault (logged)."""
    mapped = answer(error)
    if mapped.fault:
        log.exception("MCP %s failed", name, exc_info=error)
    return mapped.body


async def _run(app: Restify, route: ToolRoute, arguments: dict[str, Any], caller: Caller,
               spent: Budget) -> dict[str, Any]:
    prefix = app.settings.get("server", "prefix").rstrip("/")

    def context(params: dict[str, str] | None = None, url: str = "", given: Any = None) -> Context:
        extras: dict[str, Any] = {"url": url} if url else {}
        if caller.address:
            extras["address"] = caller.address
        if given is not None:
            extras[FILTER] = given  # the typed filter object, read by the operation as it is
        return Context(user=caller.user, door="mcp", params=params or {}, base_url=caller.base_url, extras=extras,
                       budget=spent)

    name, operation = route.resource, route.operation
    if operation in extensions.OPERATIONS:
        return await extensions.call(app, route, arguments, caller.user, context)
    if operation in ("index", "aggregate"):
        given = arguments.pop(FILTER, None)
        run = operations.index if operation == "index" else aggregating.aggregate
        return await run(app, name, context(query_params(arguments), f"{caller.base_url}{prefix}/{name}", given))
    if operation == "profile":
        return await profile.show(app, context(query_params(arguments)))
    if operation == "tokens-list":
        return await tokens.listing(app, context())
    if operation == "tokens-revoke":
        await tokens.revoke(app, query_text(arguments.get("id", "")), context())
        return {"revoked": True, "id": query_text(arguments.get("id", ""))}
    if operation in attaching.OPERATIONS:
        return await relation_tools.call(app, route.name, name, operation, arguments, caller.user, context)
    if operation in bulk.OPERATIONS:
        return await bulk.run(app, route.name, name, operation, arguments, caller.user, context)
    sent = dict(arguments)
    id = query_text(arguments.pop("id", ""))
    if operation == "show":
        return await operations.show(app, name, id, context(query_params(arguments)))
    if operation == "store":
        return await operations.store(app, name, arguments, context())
    versions = operations.expected_versions(arguments.pop("version", None))
    if operation == "update":
        return await operations.update(app, name, id, arguments, context(), partial=True, versions=versions)
    if operation == "restore":
        return await trash.restore(app, name, id, context(), versions=versions)
    # A forced delete (soft deletes) reaches trashed records too, and always asks for a confirmation first.
    forcing = {"force": query_text(arguments["force"]), "trashed": "with"} if arguments.get("force") else None
    if forcing or guard.confirming(app.settings, operation):
        return await guard.delete_after_confirmation(app, route.name, name, id, sent, caller.user,
                                                     lambda: context(forcing), versions)
    await operations.delete(app, name, id, context(), versions=versions)
    return {"deleted": True, "id": id}


def query_params(arguments: Mapping[str, Any]) -> dict[str, str]:
    """Arguments as a query string would carry them: every value a string, lists comma-joined.

    A null named filter means "records without a value" (`?field=null`); a null page,
    search, sort or include is simply left out.
    """
    params: dict[str, str] = {}
    for key, value in arguments.items():
        if value is None and key in RESERVED:
            continue
        if key == "fields" and isinstance(value, Mapping):  # per type: `fields[<type>]`, as in a query string
            params.update((f"fields[{type_name}]", query_text(names)) for type_name, names in value.items())
            continue
        params[str(key)] = query_text(value)
    return params
