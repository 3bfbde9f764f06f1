"""MCP Streamable HTTP at /mcp, on the same Tornado server and port as the REST API.

The SDK's `StreamableHTTPSessionManager.handle_request` is plain ASGI; `McpHandler`
authenticates the bearer token first (no token: 401 before the SDK sees anything),
then hands the buffered request to it as an ASGI scope and writes back what it sends.
The manager runs stateless with JSON responses, so any web process can answer any
request: no sessions, no sticky load balancing.

A manager's `run()` must be entered and left in one long-lived task, once: `McpEndpoint`
starts it lazily on the running loop when the first request arrives (a new loop — each
test has its own — gets a new manager) and stops it in `close()`.
"""
import asyncio
import json
import logging
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import unquote

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_PARAMS, PARSE_ERROR
from tornado.web import Application

from service.config import Settings
from service.core.declarations.app import Restify
from service.core.kernel.answers import answer
from service.core.operations import oauth
from service.core.kernel.errors import (EndpointUnavailable, HostNotAllowed, MethodNotAllowed, OriginNotAllowed,
                                        RestifyError, ServerBusy, Unauthenticated)
from service.http.base import JsonHandler
from service.mcp.server import Caller, build_server

log = logging.getLogger("restify.mcp")
PATH = "/mcp"
ALLOWED = "POST"  # the stateless endpoint has no session: no GET stream, no DELETE
_CALLER = "restify.caller"  # the ASGI scope key that carries the authenticated Caller to the tools


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return [str(item) for item in value or []]


def security_settings(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection from `[mcp] allowed_hosts/allowed_origins`; "*" among the hosts turns it off."""
    hosts = _listed(settings.get("mcp", "allowed_hosts"))
    origins = _listed(settings.get("mcp", "allowed_origins"))
    return TransportSecuritySettings(enable_dns_rebinding_protection="*" not in hosts,
                                     allowed_hosts=hosts, allowed_origins=origins)


def _address(host: str) -> tuple[str, int | None]:
    name, colon, port = host.rpartition(":")  # "[::1]:8000" -> ("[::1]", 8000); "[::1]" has no port
    return (name, int(port)) if colon and port.isdigit() else (host, None)


async def _caller_from_scope(ctx: ServerRequestContext[Any, Any]) -> Caller:
    scope = getattr(ctx.request, "scope", None) or {}
    caller = scope.get(_CALLER)
    if not isinstance(caller, Caller):  # never reached through McpHandler, which always sets it
        raise Unauthenticated()
    return caller


class McpEndpoint:
    """The SDK server and session manager behind one app's /mcp route."""

    def __init__(self, app: Restify) -> None:
        self.app = app
        self.server = build_server(app, _caller_from_scope)
        self._manager: StreamableHTTPSessionManager | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._closed = False

    async def manager(self) -> StreamableHTTPSessionManager | None:
        """The running manager, started on this loop if need be; None once closed or if it failed."""
        if self._closed:
            return None
        loop = asyncio.get_running_loop()
        if self._task is None or self._loop is not loop or self._task.done():
            self._start(loop)
        started, task = self._started, self._task
        assert started is not None and task is not None
        try:
            await asyncio.shield(started)
        except asyncio.CancelledError:
            if not started.cancelled():
                raise  # this request was cancelled, not the manager
            return None
        except Exception:  # noqa: BLE001 - the manager failed to start; _run has logged why
            return None
        return None if task.done() else self._manager

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        settings = self.app.settings
        self._manager = StreamableHTTPSessionManager(
            self.server, json_response=True, stateless=True, security_settings=security_settings(settings),
            max_request_body_size=int(settings.get("server", "max_body_bytes")),
        )
        self._loop = loop
        self._started = loop.create_future()
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._run(self._manager, self._started, self._stop), name="restify-mcp")

    @staticmethod
    async def _run(manager: StreamableHTTPSessionManager, started: "asyncio.Future[None]",
                   stop: asyncio.Event) -> None:
        try:
            async with manager.run():
                started.set_result(None)
                await stop.wait()
        except Exception as error:
            log.exception("the MCP session manager stopped")
            if not started.done():
                started.set_exception(error)
        finally:
            if not started.done():
                started.cancel()

    async def close(self) -> None:
        """Stops the manager (from the loop it runs on); later requests are answered 503."""
        self._closed = True
        task, stop = self._task, self._stop
        if task is None or task.done() or stop is None:
            return
        if self._loop is asyncio.get_running_loop():
            stop.set()
            await task
        else:  # its loop is elsewhere or closed: nothing can be awaited from here
            try:
                task.get_loop().call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop is closed, and the task with it
                pass


class McpHandler(JsonHandler):
    """POST /mcp: authenticate, then bridge the request to the SDK as ASGI."""

    door = "mcp"
    challenges = True

    def initialize(self, app: Restify, endpoint: McpEndpoint) -> None:  # type: ignore[override]
        super().initialize(app)
        self.endpoint = endpoint
        self._gone = asyncio.Event()
        self._error: bytes | None = None  # an error answer's body, held to be rewritten (see _finish_error)
        self._plain_error = False
        self._busy: ServerBusy | None = None  # no room to send the answer: answered once the SDK returns

    async def admit(self) -> None:
        await super().admit()
        if self.user is None:
            raise Unauthenticated()

    def resource(self) -> str | None:
        return oauth.resource_url(self.app, self.context()) if oauth.uses_oauth(self.app) else None

    def challenge(self) -> str:
        """With OAuth, where a client learns how to get a token (RFC 9728 section 5.1)."""
        if not oauth.uses_oauth(self.app):
            return "Bearer"
        error = ', error="invalid_token"' if self.request.headers.get("Authorization") else ""
        return f'Bearer resource_metadata="{oauth.metadata_url(self.app, self.context())}"{error}'

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None))[1]
        if isinstance(error, MethodNotAllowed) or getattr(error, "status_code", None) == MethodNotAllowed.status:
            self.set_header("Allow", ALLOWED)
        super().write_error(status_code, **kwargs)

    def compute_etag(self) -> None:
        return None

    def on_connection_close(self) -> None:
        self._gone.set()

    def on_finish(self) -> None:
        self._gone.set()

    async def post(self) -> None:
        await self._serve()

    async def get(self) -> None:
        # Stateless: no session, so no stream for GET to open (the SDK would hold it open for
        # nothing) and no session for DELETE to end; POST is the whole protocol here.
        raise MethodNotAllowed()

    async def delete(self) -> None:
        raise MethodNotAllowed()

    async def _serve(self) -> None:
        manager = await self.endpoint.manager()
        if manager is None:
            raise EndpointUnavailable()
        try:
            await manager.handle_request(self._scope(), self._receive(), self._send)
        except RuntimeError as error:  # e.g. "Task group is not initialized": the manager stopped meanwhile
            log.warning("MCP request refused: %s", error)
            if self._headers_written:
                return
            raise EndpointUnavailable() from None
        if self._busy is not None:
            raise self._busy
        if not self._finished:
            self.finish()

    # -- ASGI ----------------------------------------------------------------------
    def _scope(self) -> dict[str, Any]:
        request = self.request
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request.version.split("/")[-1],
            "method": request.method,
            "scheme": request.protocol,
            "path": unquote(request.path),
            "raw_path": request.path.encode("latin-1"),
            "query_string": request.query.encode("latin-1"),
            "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.get_all()],
            "client": (request.remote_ip, 0),
            "server": _address(request.host),
            _CALLER: Caller(self.user, f"{request.protocol}://{request.host}", request.remote_ip),
        }

    def _receive(self) -> Any:
        body = self.body_bytes
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await self._gone.wait()
            return {"type": "http.disconnect"}
        return receive

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        if self._finished:
            return
        if message["type"] == "http.response.start":
            self.set_status(message["status"])
            self.clear_header("Content-Type")
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
            for name, value in headers:
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.add_header(name, value)
            content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
            # Errors are JSON everywhere in this service; the SDK answers a few of its own in plain text.
            self._plain_error = not content_type.startswith("application/json")
            self._error = b"" if message["status"] >= 400 else None
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if self._error is not None:
                self._error += body
                if not message.get("more_body"):
                    self._finish_error(self._error)
                return
            more = message.get("more_body", False)
            if not more and not self._headers_written:  # the whole answer in one message (JSON responses)
                try:
                    await self.send_bytes(body)
                except ServerBusy as busy:  # raised here, the SDK would answer it as its own error
                    self._busy = busy
                return
            if not await self.write_chunks(body):
                self._gone.set()  # closed by the server, which tells no one: the SDK's receive() learns here
            if not more:
                self.finish()

    def _finish_error(self, body: bytes) -> None:
        if self._plain_error:
            self.set_header("Content-Type", "application/json; charset=UTF-8")
            text = body.decode("utf-8", "replace").strip()
            refusal = self._security_refusal(text)
            # The SDK's own status (421 or 403) stays; the body says which setting allows the request.
            body = json.dumps(answer(refusal).body if refusal else {"message": text or self._reason}).encode()
        self.finish(fixed_rpc_error(body))

    def _security_refusal(self, text: str) -> RestifyError | None:
        """The SDK's plain-text DNS-rebinding refusals (mcp/server/transport_security.py), as our errors."""
        if text == "Invalid Host header":
            return HostNotAllowed(self.request.headers.get("Host", ""))
        if text == "Invalid Origin header":
            return OriginNotAllowed(self.request.headers.get("Origin", ""))
        return None


# The SDK words these refusals with the parser's or pydantic's own text (positions, URLs).
_RPC_TEXTS = {PARSE_ERROR: "Parse error: the request body is not valid JSON.",
              INVALID_PARAMS: "Validation error: the request body is not a valid JSON-RPC message."}


def fixed_rpc_error(body: bytes) -> bytes:
    """A JSON-RPC error answer with the SDK's exception text replaced by a fixed one."""
    try:
        answer = json.loads(body)
        error = answer["error"]
        error["message"] = _RPC_TEXTS[error["code"]]
    except (ValueError, TypeError, KeyError):  # not one of those: it carries a fixed text already
        return body
    error.pop("data", None)
    return json.dumps(answer, separators=(",", ":")).encode()


def mcp_routes(app: Restify) -> list[tuple]:
    """The /mcp route with its own endpoint (one SDK server and session manager per app)."""
    return [(PATH, McpHandler, {"app": app, "endpoint": McpEndpoint(app)}, PATH)]


def endpoints(application: Application) -> list[McpEndpoint]:
    """The MCP endpoints a Tornado application serves (to close them when it stops)."""
    found = []
    for rule in application.wildcard_router.rules:
        endpoint = (rule.target_kwargs or {}).get("endpoint")
        if isinstance(endpoint, McpEndpoint):
            found.append(endpoint)
    return found
