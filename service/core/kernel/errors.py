"""Domain errors raised by the operations; each front door maps them once.

    RestifyError
    ├── BadRequest              400  malformed JSON or query
    │   └── MalformedRequest    400  the HTTP request itself (refused by the HTTP server)
    ├── ResponseTooLarge        400  the answer would be larger than `server.max_response_bytes`
    ├── Unauthenticated         401  no valid bearer token where one is needed
    ├── Forbidden               403  a policy said no
    │   ├── MissingAbility      403  the token's abilities do not cover the operation
    │   ├── EmailNotVerified    403  a write by an unconfirmed address (`auth.require_verified`)
    │   └── OriginNotAllowed    403  MCP: an Origin header not in `mcp.allowed_origins`
    ├── NotFound                404  no such resource or record
    ├── HostNotAllowed          421  MCP: a Host header not in `mcp.allowed_hosts`
    ├── MethodNotAllowed        405
    ├── PreconditionFailed      412  the record changed since the client read it (If-Match, `version`)
    ├── PayloadTooLarge         413
    ├── UriTooLong              414
    ├── ValidationFailed        422  field errors
    ├── TooManyRequests         429  (Retry-After)
    │   └── Busy                429  an expensive query while its turns are taken (service/core/reading/admission.py)
    ├── LiveUnavailable         501  live changes without change streams
    ├── ServiceUnavailable      503  the database is unreachable
    ├── ServerBusy              503  too many bytes already wait to be sent to clients (Retry-After)
    ├── EndpointUnavailable     503  the MCP endpoint is stopped or not started
    ├── OAuthError              400  an OAuth endpoint's refusal, in the RFCs' own body ({"error", ...})
    └── NotReady                503  readiness: the database does not answer a probe
    DeclarationError                 a broken repository declaration, raised at start-up
    └── NotAnApplication             the directory holds no application package

Each error says where it is answered and when, for people; `service/core/kernel/answers.py` lists them in
`TABLE` (the OpenAPI document's error responses are built from it) and maps any error to what a door says.
"""
import json
from typing import Any, ClassVar


API, LIVE, MCP, OPS, OAUTH = "api", "live", "mcp", "ops", "oauth"  # where an error is answered


class RestifyError(Exception):
    status = 500
    code = "INTERNAL"
    default_message = "Server error."
    retry_after: int | None = None  # seconds, sent as `Retry-After`
    # Where it is answered (API: the REST routes, which the OpenAPI document describes; LIVE: live feeds;
    # MCP: the /mcp endpoint itself; OPS: /readyz), and when, for people (OpenAPI's descriptions).
    where: ClassVar[str] = API
    when: ClassVar[str] = ""

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)

    @classmethod
    def example(cls) -> "RestifyError":
        """One error of this kind, as documentation shows it."""
        return cls()

    def body(self) -> dict[str, Any]:
        return {"message": self.message}


class BadRequest(RestifyError):
    status, code, default_message = 400, "BAD_REQUEST", "Bad request."
    when = "Malformed JSON, a body that is not an object, or a malformed query (page, perPage, sort, related...)."

    def __init__(self, message: str | None = None, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors

    def body(self) -> dict[str, Any]:
        body = super().body()
        if self.errors:
            body["errors"] = self.errors
        return body


class MalformedRequest(BadRequest):
    """A request the HTTP server refuses before any route reads it (a malformed header or body framing)."""
    default_message = "The request is malformed."
    when = "A request the HTTP server cannot read (its header or body framing)."


class Unauthenticated(RestifyError):
    status, code, default_message = 401, "UNAUTHENTICATED", "Unauthenticated."
    when = ("No valid bearer token where one is needed, an invalid token on any route, a guest refused by a "
            "policy, or (login) credentials that do not match.")


class Forbidden(RestifyError):
    status, code, default_message = 403, "FORBIDDEN", "This action is unauthorized."
    when = "A logged-in user refused by the repository's policy."


class MissingAbility(Forbidden):
    """The bearer token lacks the ability an operation needs (`posts:read`, `posts:write`, an action's
    `posts:<key>`): the user may do it, this token may not. The answer names the ability."""
    code = "MISSING_ABILITY"
    when = ("The bearer token's abilities do not cover the operation: code MISSING_ABILITY, and `ability` names "
            "the one it needs (e.g. posts:write).")

    def __init__(self, ability: str) -> None:
        super().__init__(f"This token lacks the ability {json.dumps(ability)}.")
        self.ability = ability

    @classmethod
    def example(cls) -> "MissingAbility":
        return cls("posts:write")

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, "ability": self.ability}


class EmailNotVerified(Forbidden):
    code, default_message = "EMAIL_NOT_VERIFIED", "Your email address is not verified."
    when = "A write by a user whose address is not confirmed while `auth.require_verified` is on."

    def body(self) -> dict[str, Any]:
        # The code in the body too: a client tells "confirm your address first" from a policy's refusal.
        return {**super().body(), "code": self.code}


class NotFound(RestifyError):
    status, code, default_message = 404, "NOT_FOUND", "Not found."
    when = "No such resource or record."


class MethodNotAllowed(RestifyError):
    status, code, default_message = 405, "METHOD_NOT_ALLOWED", "Method not allowed."
    when = "The path exists but not with this method (also CORS preflights while CORS is off)."


class PreconditionFailed(RestifyError):
    status, code, default_message = 412, "PRECONDITION_FAILED", "The record was changed since you read it."
    when = "If-Match named another version: the record was changed since it was read; nothing was written."


class PayloadTooLarge(RestifyError):
    status, code, default_message = 413, "PAYLOAD_TOO_LARGE", "The request body is too large."
    when = "The body is above server.max_body_bytes (JSON) or server.max_upload_bytes (multipart)."


class ValidationFailed(RestifyError):
    status, code, default_message = 422, "VALIDATION_FAILED", "The given data was invalid."
    when = "Field errors, one message per field: the first rule that failed."

    def __init__(self, errors: dict[str, list[str]], message: str | None = None) -> None:
        super().__init__(message)
        self.errors = errors

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "errors": self.errors}

    @classmethod
    def example(cls) -> "ValidationFailed":
        return cls({"title": ["The title field is required."]})


class UriTooLong(RestifyError):
    status, code, default_message = 414, "URI_TOO_LONG", "The query string is too long."
    when = "The query string is above server.max_query_bytes."


class TooManyRequests(RestifyError):
    status, code, default_message = 429, "TOO_MANY_REQUESTS", "Too many attempts."
    when = ("Too many logins for this account or this address, too many registrations from this address, "
            "writes past the user's pace (throttle.writes_per_minute), or the password hashing queue is full; "
            "retry after Retry-After seconds.")

    def __init__(self, message: str | None = None, retry_after: int = 60) -> None:
        super().__init__(message or f"Too many attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after

    @classmethod
    def example(cls) -> "TooManyRequests":
        return cls(retry_after=42)


class Busy(TooManyRequests):
    """An expensive query refused before it starts: its owner has one running, or the process runs as
    many as it takes at once. Every door answers it as a 429 (REST with Retry-After, GraphQL's
    `TOO_MANY_REQUESTS`, an MCP error result); the message says why and when to try again."""
    when = ("An expensive query (a search, a relation sort, a long in list, a deep page) while the caller has "
            "one running or the server runs as many as it takes; retry after Retry-After seconds.")


class ResponseTooLarge(RestifyError):
    """The answer would be larger than `server.max_response_bytes`: found while it is built, before
    the rest of it is built, or (for the part built last, where the door measures the answer) as it
    is encoded, before any of it is sent."""
    status, code = 400, "RESPONSE_TOO_LARGE"
    when = "The answer would be larger than server.max_response_bytes."

    def __init__(self, limit: int) -> None:
        super().__init__(f"The answer would be larger than {limit} bytes (server.max_response_bytes); ask for "
                         "fewer related records, fewer fields (fields=) or a smaller perPage.")

    @classmethod
    def example(cls) -> "ResponseTooLarge":
        return cls(1_048_576)


class LiveUnavailable(RestifyError):
    status, code = 501, "LIVE_UNAVAILABLE"
    default_message = "Live changes need a database with change streams (a MongoDB replica set)."
    where, when = LIVE, "A live feed or subscription on a database without change streams."


class ServiceUnavailable(RestifyError):
    status, code, default_message = 503, "SERVICE_UNAVAILABLE", "The database is unavailable."
    when = "The database is unreachable; retry later."


class EndpointUnavailable(RestifyError):
    status, code, default_message = 503, "SERVICE_UNAVAILABLE", "The MCP endpoint is not available."
    where, when = MCP, "The MCP endpoint is stopped, or was not started on this loop."


def _not_allowed_for_mcp(header: str, setting: str, value: str) -> str:
    """Why MCP refused a Host or Origin header (DNS rebinding), naming the setting that allows it and how."""
    quoted, variable = json.dumps(value), f"RESTIFY_{setting.replace('.', '_').upper()}"
    off = ' ["*"] turns the check off, behind a proxy that checks hosts itself.' if header == "Host" else ""
    return (f"MCP refused the {header} header {quoted}: it is not in the setting {setting}. Allow it in restify.toml "
            f"([mcp] {setting[4:]} = [..., {quoted}]) or in the environment ({variable}='[{quoted}]', which "
            f'replaces the default list); a trailing ":*" allows any port.{off}')


class HostNotAllowed(RestifyError):
    status, code, default_message = 421, "MISDIRECTED_REQUEST", "The Host header is not allowed for MCP."
    where, when = MCP, "The request's Host header is not in mcp.allowed_hosts (DNS-rebinding protection)."

    def __init__(self, host: str = "") -> None:
        super().__init__(_not_allowed_for_mcp("Host", "mcp.allowed_hosts", host))


class OriginNotAllowed(Forbidden):
    default_message = "The Origin header is not allowed for MCP."
    where, when = MCP, "The request's Origin header is not in mcp.allowed_origins (DNS-rebinding protection)."

    def __init__(self, origin: str = "") -> None:
        super().__init__(_not_allowed_for_mcp("Origin", "mcp.allowed_origins", origin))


class NotReady(RestifyError):
    status, code, default_message = 503, "SERVICE_UNAVAILABLE", "The database does not answer."
    where, when = OPS, "The database does not answer a readiness probe in time."


class ServerBusy(RestifyError):
    """A large answer found no room under `server.max_pending_bytes` (service/http/sending.py)."""
    status, code = 503, "SERVER_BUSY"
    default_message = "The server is busy sending other answers. Try again in a moment."
    retry_after = 5
    when = ("For an answer over 64 KiB: the server is busy sending other answers (server.max_pending_bytes); "
            "retry after Retry-After seconds.")


class DeclarationError(Exception):
    """A repository, model, field or policy declaration that cannot work; raised at start-up."""
    location: tuple[str, int] | None = None  # (file, line) of the declaration, when known


class NotAnApplication(DeclarationError):
    """The application directory has no repositories package (a hint, not a place in a file)."""


class OAuthError(RestifyError):
    """A refusal of an OAuth endpoint (`/oauth/token`, `/oauth/register`, ...), answered as RFC 6749
    section 5.2 says: `{"error": "<code>", "error_description": "..."}`, the code one the RFCs name
    (`invalid_request`, `invalid_grant`, `invalid_client`, `invalid_target`, `unsupported_grant_type`,
    `invalid_client_metadata`, `invalid_redirect_uri`, ...)."""
    status, code, default_message = 400, "invalid_request", "The request is not a valid OAuth request."
    where, when = OAUTH, "An OAuth endpoint refuses a request; the code is the one the OAuth RFCs name."

    def __init__(self, code: str = "invalid_request", message: str | None = None) -> None:
        super().__init__(message)
        # An unknown client is 401 (RFC 6749 section 5.2); every other refusal 400.
        self.code, self.status = code, 401 if code == "invalid_client" else 400

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "error_description": self.message}
