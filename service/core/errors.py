"""Domain errors raised by the operations; each front door maps them once.

    RestifyError
    ├── BadRequest          400  malformed JSON or query
    ├── ResponseTooLarge    400  the answer would be larger than `server.max_response_bytes`
    ├── Unauthenticated     401  no valid bearer token where one is needed
    ├── Forbidden           403  a policy said no
    ├── NotFound            404  no such resource or record
    ├── MethodNotAllowed    405
    ├── PreconditionFailed  412  the record changed since the client read it (If-Match, `version`)
    ├── PayloadTooLarge     413
    ├── UriTooLong          414
    ├── ValidationFailed    422  field errors
    ├── TooManyRequests     429  (Retry-After)
    │   └── Busy            429  an expensive query while its turns are taken (service/core/admission.py)
    ├── ServiceUnavailable  503  the database is unreachable
    └── DeclarationError         a broken repository declaration, raised at start-up
        └── NotAnApplication     the directory holds no application package

Storage's own refusals become domain errors in one place, `from_storage`; `answer` gives what every
door says for any error (status, body, code), so REST, GraphQL and MCP only wrap it.
"""
import logging
from dataclasses import dataclass, field
from typing import Any

from storage import Stale, Unavailable, Unstorable

log = logging.getLogger("restify.errors")


class RestifyError(Exception):
    status = 500
    code = "INTERNAL"
    default_message = "Server error."

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        return {"message": self.message}


class BadRequest(RestifyError):
    status, code, default_message = 400, "BAD_REQUEST", "Bad request."

    def __init__(self, message: str | None = None, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors

    def body(self) -> dict[str, Any]:
        body = super().body()
        if self.errors:
            body["errors"] = self.errors
        return body


class Unauthenticated(RestifyError):
    status, code, default_message = 401, "UNAUTHENTICATED", "Unauthenticated."


class Forbidden(RestifyError):
    status, code, default_message = 403, "FORBIDDEN", "This action is unauthorized."


class NotFound(RestifyError):
    status, code, default_message = 404, "NOT_FOUND", "Not found."


class MethodNotAllowed(RestifyError):
    status, code, default_message = 405, "METHOD_NOT_ALLOWED", "Method not allowed."


class PreconditionFailed(RestifyError):
    status, code, default_message = 412, "PRECONDITION_FAILED", "The record was changed since you read it."


class PayloadTooLarge(RestifyError):
    status, code, default_message = 413, "PAYLOAD_TOO_LARGE", "The request body is too large."


class ValidationFailed(RestifyError):
    status, code, default_message = 422, "VALIDATION_FAILED", "The given data was invalid."

    def __init__(self, errors: dict[str, list[str]], message: str | None = None) -> None:
        super().__init__(message)
        self.errors = errors

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "errors": self.errors}


class UriTooLong(RestifyError):
    status, code, default_message = 414, "URI_TOO_LONG", "The query string is too long."


class TooManyRequests(RestifyError):
    status, code, default_message = 429, "TOO_MANY_REQUESTS", "Too many attempts."

    def __init__(self, message: str | None = None, retry_after: int = 60) -> None:
        super().__init__(message or f"Too many attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


class Busy(TooManyRequests):
    """An expensive query refused before it starts: its owner has one running, or the process runs as
    many as it takes at once. Every door answers it as a 429 (REST with Retry-After, GraphQL's
    `TOO_MANY_REQUESTS`, an MCP error result); the message says why and when to try again."""


class ResponseTooLarge(RestifyError):
    """The answer would be larger than `server.max_response_bytes`: found while it is built, before
    the rest of it is built or any of it is encoded."""
    status, code = 400, "RESPONSE_TOO_LARGE"

    def __init__(self, limit: int) -> None:
        super().__init__(f"The answer would be larger than {limit} bytes (server.max_response_bytes); ask for "
                         "fewer related records, fewer fields (fields=) or a smaller perPage.")


class ServiceUnavailable(RestifyError):
    status, code, default_message = 503, "SERVICE_UNAVAILABLE", "The database is unavailable."


class DeclarationError(Exception):
    """A repository, model, field or policy declaration that cannot work; raised at start-up."""
    location: tuple[str, int] | None = None  # (file, line) of the declaration, when known


class NotAnApplication(DeclarationError):
    """The application directory has no repositories package (a hint, not a place in a file)."""


def from_storage(error: BaseException) -> BaseException:
    """The domain error for what storage raised (the database is unreachable, a value it cannot
    store, a versioned write that found another version); any other error as it is."""
    if isinstance(error, Unavailable):
        return ServiceUnavailable()
    if isinstance(error, Stale):
        return PreconditionFailed()
    if isinstance(error, Unstorable):
        return BadRequest(f"The request holds {error}, which cannot be stored.")
    return error


@dataclass(frozen=True)
class Answer:
    """What a door says for an error: the HTTP status, the JSON body (REST's body, MCP's tool result),
    the code (GraphQL's `extensions.code`) and headers HTTP adds (`Retry-After`)."""
    status: int
    body: dict[str, Any]
    code: str
    headers: dict[str, str] = field(default_factory=dict)
    fault: bool = False  # not a refusal but a failure: the door logs it with its traceback

    def extensions(self) -> dict[str, Any]:
        """GraphQL's `extensions`: the code, and the field errors when there are some."""
        errors = self.body.get("errors")
        return {"code": self.code, "errors": errors} if errors else {"code": self.code}


def answer(error: BaseException) -> Answer:
    """The one mapping of errors to answers. A domain error (or a storage refusal) gives its own;
    anything else is a fault, answered with a fixed text and never the exception's own words."""
    if isinstance(error, Unavailable):
        log.warning("database unavailable: %s", error)
    error = from_storage(error)
    if isinstance(error, RestifyError):
        headers = {"Retry-After": str(error.retry_after)} if isinstance(error, TooManyRequests) else {}
        return Answer(error.status, error.body(), error.code, headers)
    return Answer(500, {"message": RestifyError.default_message}, RestifyError.code, fault=True)


def is_unavailable(error: BaseException) -> bool:
    """Whether `error` says the database cannot be reached (for doors that report it, not answer it)."""
    return isinstance(from_storage(error), ServiceUnavailable)
