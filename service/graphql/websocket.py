"""GraphQL over WebSocket on `/graphql`, subprotocol `graphql-transport-ws` (the protocol of the
`graphql-ws` library): subscriptions to live changes, and queries or mutations as one-result streams.

The token travels in the `connection_init` payload, `{"Authorization": "Bearer ..."}` (the key in
any case), or else in the upgrade request's `Authorization` header (clients other than browsers can
send one). Close codes: 4400 bad message, 4401 subscribe before acknowledgement, 4403 a refused
or revoked token, 4406 another subprotocol, 4408 no `connection_init` in time, 4409 a reused
operation id, 4429 a second `connection_init`, 4503 a consumer too slow to keep up.
"""
import asyncio
import json
from collections.abc import Awaitable, Iterator
from typing import Any, cast

from graphql import ExecutionResult, OperationType, create_source_event_stream, get_operation_ast
from tornado.httputil import HTTPHeaders
from tornado.iostream import IOStream
from tornado.routing import PathMatches, Rule
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.kernel.errors import BadRequest, RestifyError, TooManyRequests
from service.core.live.subscription import AccessRevoked, ConsumerTooSlow
from service.core.operations import auth
from service.graphql.executor import error_body, error_entry
from service.graphql.live_socket import LiveOperation
from service.graphql.shared_events import SharedEventExecutor
from service.graphql.subscriptions import Changes
from service.graphql.service import GraphQLService
from service.http.base import SERVER_NAME, encode_json

PROTOCOL = "graphql-transport-ws"
INIT_TIMEOUT = 10.0
# Tornado writes header names as `Sec-Websocket-Protocol`. Names are case-insensitive, but some clients
# look the upgrade answer's headers up by RFC 6455's spelling: gql's websockets transport reads
# `Sec-WebSocket-Protocol` from a plain dict, misses it, and falls back to the legacy Apollo protocol.
_SPELLING = {name.lower(): name for name in ("Sec-WebSocket-Protocol", "Sec-WebSocket-Accept", "Sec-WebSocket-Version")}


class _UpgradeHeaders(HTTPHeaders):
    """Response headers written with RFC 6455's spelling of the WebSocket names."""

    def get_all(self) -> Iterator[tuple[str, str]]:
        for name, value in super().get_all():
            yield _SPELLING.get(name.lower(), name), value


def _refusal(error: BaseException) -> list[dict[str, Any]]:
    return [error_entry(error, "subscription failed")]


def _bearer(payload: Any) -> str | None:
    """The token of `{"Authorization": "Bearer ..."}`, the key in any case; "" when malformed."""
    if not isinstance(payload, dict):
        return None
    value = next((v for k, v in payload.items() if isinstance(k, str) and k.lower() == "authorization"), None)
    if value is None:
        return None
    scheme, _, token = str(value).partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ""


class GraphQLSocket(WebSocketHandler):
    def initialize(self, app: Restify, graphql: GraphQLService) -> None:
        self.app, self.graphql = app, graphql
        self.user: Model | None = None
        self.acknowledged = False
        self._initialised = False
        self._operations: dict[str, asyncio.Task] = {}
        self._init_timer: Any = None

    def clear(self) -> None:
        super().clear()
        self._headers = _UpgradeHeaders(self._headers)

    def set_default_headers(self) -> None:
        self.set_header("Server", SERVER_NAME)  # as on every other answer: Tornado's own names its version

    @property
    def max_message_size(self) -> int:
        # A message carries one operation, as a POST body does: the same limit (Tornado closes the
        # socket with 1009 past it).
        return int(self.app.settings.get("graphql", "max_query_bytes"))

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return PROTOCOL if PROTOCOL in subprotocols else None

    def open(self) -> None:
        if self.selected_subprotocol != PROTOCOL:
            self.close(4406, "Subprotocol not acceptable")
            return
        loop = asyncio.get_running_loop()
        self._init_timer = loop.call_later(INIT_TIMEOUT, self._initialisation_timeout)

    def _initialisation_timeout(self) -> None:
        if not self.acknowledged:
            self.close(4408, "Connection initialisation timeout")

    async def on_message(self, message: str | bytes) -> None:
        try:
            received = json.loads(message)
            kind = received["type"] if isinstance(received, dict) else None
        except (ValueError, KeyError):
            kind = None
        if not isinstance(kind, str):
            self.close(4400, "Invalid message")
            return
        if kind == "connection_init":
            await self._initialise(received.get("payload"))
        elif kind == "ping":
            self._send({"type": "pong"})
        elif kind == "pong":
            pass
        elif kind == "subscribe":
            self._subscribe(received)
        elif kind == "complete":
            task = self._operations.pop(str(received.get("id")), None)
            if task is not None:
                task.cancel()
        else:
            self.close(4400, f"Unknown message type {kind!r}")

    async def _initialise(self, payload: Any) -> None:
        if self._initialised:
            self.close(4429, "Too many initialisation requests")
            return
        self._initialised = True
        token = _bearer(payload)
        if token is None and "Authorization" in self.request.headers:
            token = _bearer({"Authorization": self.request.headers["Authorization"]})
        if token is not None:
            try:
                self.user = await auth.authenticate(self.app, token) if token else None
            except RestifyError:
                self.user = None
            if self.user is None:
                self.close(4403, "Forbidden")
                return
        self.acknowledged = True
        self._send({"type": "connection_ack"})

    def _subscribe(self, message: dict[str, Any]) -> None:
        if not self.acknowledged:
            self.close(4401, "Unauthorized")
            return
        id, payload = message.get("id"), message.get("payload")
        if not isinstance(id, str) or not id or not isinstance(payload, dict):
            self.close(4400, "Invalid message")
            return
        if id in self._operations:
            self.close(4409, f"Subscriber for {id} already exists")
            return
        limit = int(self.app.settings.positive("live", "max_per_connection"))
        if len(self._operations) >= limit:
            error = TooManyRequests(f"Too many subscriptions on this connection (at most {limit}).")
            self._send({"id": id, "type": "error", "payload": _refusal(error)})
            return
        self._operations[id] = asyncio.create_task(self._run(id, payload))

    async def _run(self, id: str, payload: dict[str, Any]) -> None:
        try:
            await self._stream(id, payload)
        except ConsumerTooSlow:
            self.close(4503, "Too slow: the subscriber did not keep up with the changes")
        except AccessRevoked:
            self.close(4403, "Forbidden")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - reported to the client as this operation's error
            self._send({"id": id, "type": "error", "payload": _refusal(error)})
        finally:
            self._operations.pop(id, None)

    async def _stream(self, id: str, payload: dict[str, Any]) -> None:
        endpoint = self.graphql.endpoint  # one schema for the whole operation
        context = Context(user=self.user, door="graphql", base_url=f"{self.request.protocol}://{self.request.host}",
                          extras={"address": self.request.remote_ip})
        query, variables, name = payload.get("query"), payload.get("variables"), payload.get("operationName")
        if not isinstance(query, str) or not query.strip():
            self._send({"id": id, "type": "error",
                        "payload": _refusal(BadRequest("The message must contain a query string."))})
            return
        # The same bounded preparation as over HTTP: tokens, selections, depth and cost before validation.
        prepared = await endpoint.prepared(query)
        if prepared.refusal:
            self._send({"id": id, "type": "error", "payload": _refusal(BadRequest(prepared.refusal))})
            return
        errors = prepared.errors or endpoint.size_errors(prepared, variables)
        if errors:
            self._send({"id": id, "type": "error", "payload": errors})
            return
        document = prepared.document
        assert document is not None  # a text refused or with errors is answered above; any other was parsed
        operation = get_operation_ast(document, name)
        if operation is None or operation.operation != OperationType.SUBSCRIPTION:
            self._send({"id": id, "type": "next", "payload": await endpoint.run(query, variables, name, context)})
            self._send({"id": id, "type": "complete"})
            return
        executor = SharedEventExecutor.build(endpoint.schema, document, context_value={"context": context},
                                             raw_variable_values=variables if isinstance(variables, dict) else None,
                                             operation_name=name)
        if isinstance(executor, list):
            self._send({"id": id, "type": "error", "payload": [error_body(e) for e in executor]})
            return
        source = create_source_event_stream(executor)
        if isinstance(source, Awaitable):
            source = await source
        if isinstance(source, ExecutionResult):
            self._send({"id": id, "type": "error", "payload": [error_body(e) for e in source.errors or []]})
            return
        assert isinstance(source, Changes)  # what every `<type>Changed` field subscribes to
        # Frames are made once for every socket unless a socket compresses (this handler asks none to).
        framed = self.get_compression_options() is None and self.ws_connection is not None
        live = LiveOperation(cast(SharedEventExecutor, executor), source.subscription, id, framed)
        try:
            if framed:
                live.attach(self._stream_of())
            # Awaited: a client that reads slowly holds the feed's queue, which is bounded.
            await live.run(self._write_frame if framed else self._send)
        finally:
            source.subscription.close()

    def _stream_of(self) -> IOStream:
        stream = self.ws_connection.stream if self.ws_connection is not None else None
        assert stream is not None  # the socket is open: a closed one cancelled this operation
        return stream

    async def _write_frame(self, frame: bytes) -> None:
        """Writes a frame made by `live_socket`, and waits until the socket took it."""
        await self._stream_of().write(frame)

    def _send(self, message: dict[str, Any] | bytes) -> "asyncio.Future[None]":
        """Sends a message (or its JSON); the result resolves once it is written (awaiting it is optional)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            written = self.write_message(message if isinstance(message, bytes) else encode_json(message))
        except WebSocketClosedError:
            done.set_result(None)
            return done

        def settle(_: object) -> None:
            if not done.done():
                done.set_result(None)
        written.add_done_callback(settle)
        return done

    def on_close(self) -> None:
        if self._init_timer is not None:
            self._init_timer.cancel()
        for task in self._operations.values():
            task.cancel()
        self._operations.clear()


class _Upgrades(PathMatches):
    """The GraphQL path, for WebSocket upgrade requests only: plain GETs and POSTs go on to HTTP."""

    def match(self, request: Any) -> dict[str, Any] | None:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return None
        return super().match(request)


def websocket_routes(app: Restify, graphql: GraphQLService, path: str) -> list[Rule]:
    # Its own name: Tornado warns at start-up when two rules share one (the HTTP route is `path`).
    return [Rule(_Upgrades(path), GraphQLSocket, {"app": app, "graphql": graphql}, name=f"{path} (websocket)")]
