"""The base handler: body limits, JSON in and out, bearer tokens, and the one
place where domain errors become HTTP responses."""
import asyncio
from asyncio import Future
from collections.abc import Awaitable, Callable
from typing import Any, cast


from tornado.http1connection import HTTP1Connection
from tornado.httputil import HTTPInputError, HTTPServerRequest, parse_body_arguments
from tornado.ioloop import IOLoop
from tornado.iostream import StreamClosedError
from tornado.web import HTTPError, RequestHandler, stream_request_body

from service.core.declarations.app import Restify
from service.core.declarations.budget import Budget
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.kernel.answers import Answer, answer
from service.core.kernel.errors import (
    BadRequest, MalformedRequest, MethodNotAllowed, NotFound, PayloadTooLarge, RestifyError, ServerBusy, UriTooLong,
)
from service.core.operations import auth
from service.core.writing.uploads import Upload
from service.http.access import request_id
from service.http.json_bodies import accepted_versions, decode_json, encode_json
from service.http.sending import BACKLOG, CHUNK, etag_of

SERVER_NAME = "restify"  # the `Server` header, without a version for scanners to match
# What the HTTP server's own refusals (Tornado's, before or instead of a handler) say: the error table's words.
_HTTP_MESSAGES = {error.status: error.default_message
                  for error in (MalformedRequest, NotFound, MethodNotAllowed, PayloadTooLarge, RestifyError)}


@stream_request_body
class JsonHandler(RequestHandler):
    """Streams the body so an oversized one is refused with 413 before it is buffered."""

    door = "rest"  # the label of its requests in metrics and access lines
    challenges = False  # whether a 401 says how to authenticate (`WWW-Authenticate: Bearer`, RFC 6750)

    def initialize(self, app: Restify) -> None:
        self.app = app
        self.request_id = request_id(self.request)
        self.user: Model | None = None
        self._chunks: list[bytes] = []
        self._received = 0
        self._too_large = False
        self._refused = False
        self.files: dict[str, Upload] = {}
        self._answer: Answer | None = None  # what the failure of this request answers (see log_exception)
        self._etag = True  # whether a GET without an ETag of its own gets Tornado's, of the body
        self.set_default_headers()

    @property
    def limit(self) -> int:
        # Multipart bodies carry files, so they get the (larger) upload limit.
        multipart = self.request.headers.get("Content-Type", "").startswith("multipart/form-data")
        return int(self.app.settings.get("server", "max_upload_bytes" if multipart else "max_body_bytes"))

    def set_default_headers(self) -> None:
        # Tornado calls this before initialize() and again after clear() on errors.
        self.set_header("Server", SERVER_NAME)  # Tornado's own names its version
        if not hasattr(self, "app"):
            return
        self.set_header("X-Request-Id", self.request_id)
        origin = self.request.headers.get("Origin")
        allowed = self.app.settings.value("cors", "allowed_origins")
        if origin and (origin in allowed or "*" in allowed):
            self.set_header("Access-Control-Allow-Origin", origin)
            self.set_header("Vary", "Origin")

    async def options(self, *args: str) -> None:
        """CORS preflight: answered only for configured origins (CORS is off by default)."""
        if "Access-Control-Allow-Origin" not in self._headers:
            raise MethodNotAllowed()
        self.set_header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
        self.set_header("Access-Control-Allow-Headers", ", ".join(self.app.settings.get("cors", "allowed_headers")))
        self.set_header("Access-Control-Max-Age", str(self.app.settings.get("cors", "max_age")))
        self.set_status(204)
        self.finish()

    async def head(self, *args: str) -> None:
        """What GET answers, status and headers; Tornado leaves the body out for HEAD."""
        answered = self.get(*args)
        if answered is not None:
            await answered

    async def prepare(self) -> None:
        if self.request.method == "OPTIONS":
            return
        length = self.request.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > self.limit:
            self._too_large = True
            raise PayloadTooLarge()  # answered before the body: the connection closes (see write_error)
        try:
            await self.admit()
        except Exception as error:  # noqa: BLE001 - answered in place of the method, below
            self._refuse_after_body(error)

    async def admit(self) -> None:
        """Checks made before the body arrives; what they raise is answered once it has."""
        if len(self.request.query) > int(self.app.settings.get("server", "max_query_bytes")):
            raise UriTooLong()
        header = self.request.headers.get("Authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise auth.Unauthenticated()
            self.user = await auth.authenticate(self.app, token.strip(), self.resource())

    def _refuse_after_body(self, error: Exception) -> None:
        # Answering from prepare() leaves the body unread, and Tornado then closes the keep-alive
        # connection. So the body is read and dropped, and the refusal is raised where Tornado
        # would call the method named after the request (for this request only).
        self._refused = True

        def refuse(*args: str, **kwargs: str) -> None:
            raise error
        setattr(self, self.request.method.lower(), refuse)

    def data_received(self, chunk: bytes) -> None:
        self._received += len(chunk)
        if self._received > self.limit:
            self._refuse_oversized()
        elif not self._refused:
            self._chunks.append(chunk)

    def _refuse_oversized(self) -> None:
        """A body that streams past its limit is answered at once, and the connection closes after the
        answer (Tornado stops reading when the answer comes before the body's end): reading the rest to
        keep the connection would let one client have the server read any number of bytes for nothing."""
        if self._finished:
            return
        self._too_large = True
        self._chunks.clear()
        setattr(self, self.request.method.lower(), lambda *args, **kwargs: None)  # answered here, not there
        self.send_error(413, exc_info=(PayloadTooLarge, PayloadTooLarge(), None))

    # -- input --------------------------------------------------------------
    @property
    def body_bytes(self) -> bytes:
        if self._too_large:
            raise PayloadTooLarge()
        return b"".join(self._chunks)

    def payload(self, allow_multipart: bool = False) -> dict[str, Any]:
        """The body as a dict: a JSON object, or (where allowed) multipart form fields."""
        body = self.body_bytes
        content_type = self.request.headers.get("Content-Type", "")
        # `curl -d '{...}'` labels JSON as a form: a body that opens like JSON is read as JSON.
        looks_like_json = body.lstrip()[:1] in (b"{", b"[")
        if allow_multipart and content_type.startswith("multipart/form-data"):
            return self._form(body, content_type)
        if allow_multipart and content_type.startswith("application/x-www-form-urlencoded") and not looks_like_json:
            return self._form(body, content_type)
        if content_type.startswith("multipart/form-data"):
            raise BadRequest("This route takes a JSON body; send files with POST as multipart/form-data.")
        if not body.strip():
            return {}
        value = decode_json(body)
        if not isinstance(value, dict):
            raise BadRequest("The request body must be a JSON object.")
        return value

    def _form(self, body: bytes, content_type: str) -> dict[str, Any]:
        arguments: dict[str, list[bytes]] = {}
        files: dict[str, list[Any]] = {}
        try:
            parse_body_arguments(content_type, body, arguments, files, self.request.headers)
        except HTTPInputError:
            raise BadRequest("The request body is not a valid form (multipart/form-data or urlencoded).") from None
        form: dict[str, Any] = {}
        for name, values in arguments.items():
            try:
                form[name] = values[-1].decode("utf-8")
            except UnicodeDecodeError:
                raise BadRequest(f"The form field {name!r} is not valid UTF-8.") from None
        self.files = {name: Upload(parts[-1].filename or "", parts[-1].body) for name, parts in files.items() if parts}
        return form

    def params(self) -> dict[str, str]:
        params: dict[str, str] = {}
        for name, values in self.request.query_arguments.items():
            try:
                params[name] = values[-1].decode("utf-8")
            except UnicodeDecodeError:
                raise BadRequest(f"The query parameter {name!r} is not valid UTF-8.") from None
        return params

    def repeated_params(self) -> dict[str, list[str]]:
        """Every value of a parameter sent more than once (`status[in]=a&status[in]=b`); `params`
        keeps the last one."""
        return {name: [value.decode("utf-8", "replace") for value in values]
                for name, values in self.request.query_arguments.items() if len(values) > 1}

    def context(self, **extras: Any) -> Context:
        request: HTTPServerRequest = self.request
        return Context(user=self.user, door="rest", params=self.params(),
                       base_url=f"{request.protocol}://{request.host}",
                       extras={"url": f"{request.protocol}://{request.host}{request.path}",
                               "address": request.remote_ip, "repeated": self.repeated_params(), **extras})

    def measured_context(self, **extras: Any) -> Context:
        """`context` with the answer's budget, which `send_json(..., measured=)` checks against the answer
        as encoded: an operation need not encode what it builds last a first time only to measure it."""
        context = self.context(**extras)
        context.budget = Budget(self.app.settings.max_response_bytes, door_measures=True)
        return context

    def if_match(self) -> frozenset[int] | None:
        """The versions the request's `If-Match` accepts (None: any)."""
        return accepted_versions(self.request.headers.get("If-Match"))

    # -- output -------------------------------------------------------------
    async def send_versioned(self, body: dict[str, Any]) -> None:
        """One record: with its version as a strong ETag (304 to a matching If-None-Match) when the
        answer carries no relations, whose changes do not change the version; otherwise no ETag."""
        data = body["data"]
        if "relationships" in data:
            self._etag = False
            await self.send_json(body)
            return
        self.set_header("ETag", f'"{data["meta"]["version"]}"')
        self.set_header("Cache-Control", "private")
        self.set_header("Vary", ", ".join(filter(None, (self._headers.get("Vary"), "Authorization"))))
        if self.check_etag_header():
            self.set_status(304)
            self.finish()
            return
        await self.send_json(body)

    def compute_etag(self) -> str | None:
        # Tornado's ETag of the body, for GETs that set none of their own (index), unless turned off.
        return etag_of(self._write_buffer) if self._etag else None

    async def send_json(self, body: Any, status: int = 200, measured: Budget | None = None) -> None:
        """`measured`: the budget of a `measured_context`, which the encoded answer must fit."""
        encoded = encode_json(body)
        if measured is not None:
            measured.check_encoded(encoded)
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        await self.send_bytes(encoded)

    async def send_bytes(self, body: bytes | str) -> None:
        """Ends the answer with `body`. Up to one chunk (the common case) it is one write, Tornado's
        `finish`. A larger one gets the same ETag (304 to a matching If-None-Match) and Content-Length,
        then goes out a chunk at a time, each waited for (`write_chunks`); when the bytes already
        waiting in this process leave it no room under `server.max_pending_bytes`, ServerBusy (503)."""
        if isinstance(body, str):
            body = body.encode()
        if len(body) <= CHUNK or self.request.method == "HEAD":  # HEAD: Tornado sends no body
            self.finish(body)
            return
        if self.get_status() == 200 and self.request.method == "GET" and "Etag" not in self._headers:
            # What `finish` does before its one write: the ETag of the buffered body, compared.
            self.write(body)
            self.set_etag_header()
            self._write_buffer = []
            if self.check_etag_header():
                self.set_status(304)
                self.finish()
                return
        if not await BACKLOG.admit(len(body), self.app.settings.cap("server", "max_pending_bytes")):
            raise ServerBusy()
        self.set_header("Content-Length", str(len(body)))
        await self.write_chunks(body, admitted=True)
        self.finish()  # also on a connection that is gone: the request ends as Tornado ends it

    async def write_chunks(self, data: bytes, admitted: bool = False) -> bool:
        """Writes `data` a chunk at a time, flushing each before the next; False once the connection
        is gone (closed by the client, or by `_flushed`). Until flushed, its bytes count as pending
        in this process (`admitted`: they were counted already); the rest is let go when it is gone."""
        if not admitted:
            BACKLOG.add(len(data))
        unsent = len(data)
        try:
            for start in range(0, max(len(data), 1), CHUNK):  # nothing to write still flushes the header
                piece = data[start:start + CHUNK]
                self.write(piece)
                if not await self._flushed():
                    return False
                unsent -= len(piece)
                BACKLOG.release(len(piece))
            return True
        finally:
            BACKLOG.release(unsent)

    @property
    def write_timeout(self) -> float | None:
        """Seconds a client may take nothing of what is written to it (`server.write_timeout`)."""
        seconds = self.app.settings.get("server", "write_timeout")
        return float(seconds) if seconds else None

    async def _flushed(self) -> bool:
        """Flushes what is written; False when the connection is gone, or when the client took none
        of it for `write_timeout` seconds: then the connection is closed and the write abandoned."""
        flushed = self.flush()
        try:
            if not flushed.done():
                await asyncio.wait_for(flushed, self.write_timeout)
            flushed.result()
        except TimeoutError:
            self._connection.close()
            return False
        except StreamClosedError:
            return False
        return not self._connection.stream.closed()

    @property
    def _connection(self) -> HTTP1Connection:
        return cast(HTTP1Connection, self.request.connection)  # Tornado's server speaks HTTP/1 only

    def finish(self, chunk: str | bytes | dict | None = None) -> "Future[None]":
        sent = super().finish(chunk)
        if not sent.done():  # the socket did not take it all at once: it gets write_timeout to
            self._close_unless_sent(sent)
        return sent

    def _close_unless_sent(self, sent: "Future[None]") -> None:
        seconds = self.write_timeout
        if seconds is None:
            return
        loop = IOLoop.current()
        timer = loop.call_later(seconds, self._connection.close)
        sent.add_done_callback(lambda _: loop.remove_timeout(timer))

    def no_content(self) -> None:
        self.set_status(204)
        self.finish()

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        if error is None or isinstance(error, HTTPError):  # Tornado's own refusals (malformed, unknown method)
            body = {"message": _HTTP_MESSAGES.get(status_code, self._reason)}
        else:
            mapped = self._answer if self._answer is not None else answer(error)
            self.set_status(mapped.status)
            body = mapped.body
            for name, value in mapped.headers.items():
                self.set_header(name, value)
            if self.challenges and mapped.status == 401:
                self.set_header("WWW-Authenticate", self.challenge())
        self.clear_header("Location")
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        if self._too_large or self.request.method not in self.SUPPORTED_METHODS:
            # Answered before the body was read (Tornado refuses a method it does not route before
            # anything else): the connection closes after this answer, and the answer must say so, or
            # a client sends its next request on it and has it reset.
            self.set_header("Connection", "close")
        self.finish(encode_json(body))

    def resource(self) -> str | None:
        """The OAuth resource this route is (whose access tokens it takes); None: it takes none."""
        return None

    def challenge(self) -> str:
        """The `WWW-Authenticate` of a 401 (RFC 6750)."""
        return "Bearer"

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        # Tornado calls this first, then write_error unless the answer has begun: mapped here once
        # (the mapping logs an unreachable database); refusals are answers, only faults are logged.
        if isinstance(value, HTTPError):
            return
        self._answer = answer(value)
        if self._answer.fault:
            super().log_exception(typ, value, tb)


Posted = Callable[[Restify, dict[str, Any], Context], Awaitable[Any]]


def posting(operation: Posted, status: int = 200) -> type[JsonHandler]:
    """A handler whose POST is `operation(app, body, context)`, answered with `status`: the accounts
    routes (register, login, forgot and reset a password) are no more than that."""
    class Posting(JsonHandler):
        async def post(self) -> None:
            await self.send_json(await operation(self.app, self.payload(), self.context()), status)

    Posting.__name__ = Posting.__qualname__ = f"{operation.__name__.title().replace('_', '')}Handler"
    return Posting


class NotFoundHandler(JsonHandler):
    """Every unknown path, whatever the method: a JSON 404."""

    async def admit(self) -> None:
        raise NotFound()
