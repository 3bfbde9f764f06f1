"""What every door says for an error: the table of errors with a status, and the one mapping of an
error (a domain error, a storage refusal or a fault) to an answer.

`TABLE` lists every error with a status, in the order documentation lists them; the OpenAPI document's
error responses are built from it. Storage's own refusals become domain errors in one place,
`from_storage`; `answer` gives what every door says for any error (status, body, code), so doors only wrap it.
A new error is a class in `errors.py`, listed here.
"""
import logging
from dataclasses import dataclass, field
from typing import Any

from service.core.kernel.errors import (API, BadRequest, Busy, EmailNotVerified, EndpointUnavailable, Forbidden,
                                        HostNotAllowed, LiveUnavailable, MalformedRequest, MethodNotAllowed,
                                        MissingAbility, NotFound, NotReady, OAuthError, OriginNotAllowed,
                                        PayloadTooLarge, PreconditionFailed, ResponseTooLarge, RestifyError, ServerBusy,
                                        ServiceUnavailable, TooManyRequests, Unauthenticated, UriTooLong,
                                        ValidationFailed)
from storage import Stale, Unavailable, Unstorable

log = logging.getLogger("restify.errors")

TABLE: tuple[type[RestifyError], ...] = (
    BadRequest, MalformedRequest, ResponseTooLarge, Unauthenticated, Forbidden, MissingAbility, EmailNotVerified,
    NotFound, MethodNotAllowed, PreconditionFailed, PayloadTooLarge, UriTooLong, ValidationFailed, TooManyRequests,
    Busy, LiveUnavailable, ServiceUnavailable, ServerBusy, EndpointUnavailable, HostNotAllowed, OriginNotAllowed,
    NotReady, OAuthError,
)


def answered(where: str = API) -> dict[int, list[type[RestifyError]]]:
    """The errors answered `where`, by status (ascending), each status's first in the table first."""
    found: dict[int, list[type[RestifyError]]] = {}
    for error in sorted((e for e in TABLE if e.where == where), key=lambda e: e.status):
        found.setdefault(error.status, []).append(error)
    return found


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
        headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}
        return Answer(error.status, error.body(), error.code, headers)
    return Answer(500, {"message": RestifyError.default_message}, RestifyError.code, fault=True)


def is_unavailable(error: BaseException) -> bool:
    """Whether `error` says the database cannot be reached (for doors that report it, not answer it)."""
    return isinstance(from_storage(error), ServiceUnavailable)
