"""Shared components: the error bodies and responses of `service.core.kernel.errors`, the
pagination envelope's parts, authorization flags and the bearer security scheme."""
from typing import Any

from service.core.kernel import answers, errors

Schema = dict[str, Any]
JSON = "application/json"


def ref(kind: str, name: str) -> Schema:
    return {"$ref": f"#/components/{kind}/{name}"}


def schema_ref(name: str) -> Schema:
    return ref("schemas", name)


def json_content(schema: Schema) -> dict[str, Any]:
    return {JSON: {"schema": schema}}


# -- errors -----------------------------------------------------------------------------------

# Every error the REST routes answer, by status, from the error table (`service.core.kernel.answers.TABLE`): a
# status's response is named after its first error there and described by all of them.
RESPONSES = answers.answered(errors.API)

# Answered by a path to a method it does not take, which is no operation of the document: no operation lists it,
# so no response component describes it (the document's description says it).
UNLISTED = (errors.MethodNotAllowed.status,)

# What every route may answer before its operation runs (JsonHandler.prepare): an invalid
# bearer token, an oversized query string, a database that went away while checking the token.
COMMON = (errors.Unauthenticated.status, errors.UriTooLong.status, errors.ServiceUnavailable.status)


def _body(error: type[errors.RestifyError]) -> str:
    """The body schema of an error's response: field errors always (422), maybe (400), the missing
    ability maybe (403), or none."""
    if issubclass(error, errors.ValidationFailed):
        return "ValidationError"
    if issubclass(error, errors.Forbidden):
        return "ForbiddenError"
    return "BadRequestError" if issubclass(error, errors.BadRequest) else "Error"


def paced(settings: Any) -> tuple[int, ...]:
    """(429,) where each user's writes are paced (`throttle.writes_per_minute`): what every write may answer."""
    return (429,) if settings.cap("throttle", "writes_per_minute") else ()


def error_responses(*statuses: int) -> dict[str, Schema]:
    """`{"400": {"$ref": ...}, ...}` for the given statuses plus the common ones, sorted."""
    return {str(status): ref("responses", RESPONSES[status][0].__name__)
            for status in sorted(set(statuses) | set(COMMON))}


def _responses() -> dict[str, Schema]:
    responses: dict[str, Schema] = {}
    for status, listed in RESPONSES.items():
        if status in UNLISTED:
            continue
        first = listed[0]
        response: Schema = {"description": " ".join(error.when for error in listed),
                            "content": {JSON: {"schema": schema_ref(_body(first)), "example": first.example().body()}}}
        if any(issubclass(error, errors.TooManyRequests) or error.retry_after for error in listed):
            response["headers"] = {"Retry-After": {"description": "Seconds to wait before trying again.",
                                                   "schema": {"type": "integer", "minimum": 1}}}
        responses[first.__name__] = response
    return responses


def _error_schemas() -> dict[str, Schema]:
    bag = {"type": "object", "description": "Field name -> its messages.",
           "additionalProperties": {"type": "array", "items": {"type": "string"}}}
    return {
        "Error": {"type": "object", "required": ["message"], "properties": {
            "message": {"type": "string"},
            "code": {"type": "string", "description": "Where a client must tell refusals apart: "
                                                      "`EMAIL_NOT_VERIFIED` (a 403 until the address is confirmed)."}},
                  "additionalProperties": False},
        "ErrorBag": bag,
        "BadRequestError": {"type": "object", "required": ["message"],
                            "properties": {"message": {"type": "string"}, "errors": schema_ref("ErrorBag")},
                            "additionalProperties": False},
        "ForbiddenError": {"type": "object", "required": ["message"], "additionalProperties": False,
                           "properties": {"message": {"type": "string"},
                                          "code": {"type": "string", "const": errors.MissingAbility.code,
                                                   "description": "Set when the token lacks an ability."},
                                          "ability": {"type": "string", "description": "The ability it lacks."}}},
        "ValidationError": {"type": "object", "required": ["message", "errors"],
                            "properties": {"message": {"type": "string", "const": "The given data was invalid."},
                                           "errors": schema_ref("ErrorBag")},
                            "additionalProperties": False},
    }


# -- resources ----------------------------------------------------------------------------------

FLAGS = ("authorizedToShow", "authorizedToStore", "authorizedToUpdate", "authorizedToDelete")


def _shared_schemas() -> dict[str, Schema]:
    # The record's meta: its authorization flags and its version (which each write changes; If-Match).
    flags = {**{name: {"type": "boolean"} for name in FLAGS}, "version": {"type": "integer", "minimum": 0}}
    nullable_int = {"type": ["integer", "null"]}
    nullable_url = {"type": ["string", "null"]}
    return {
        "AuthorizationFlags": {"type": "object", "required": [*FLAGS, "version"], "properties": flags,
                               "additionalProperties": False,
                               "description": "What the requesting user may do with this record, and its version."},
        "TokenMeta": {"type": "object", "required": [*FLAGS, "version", "token"],
                      "properties": {**flags, "token": {
                          "type": "string", "pattern": "^[^|]+\\|.+$",
                          "description": "A bearer token, \"<id>|<secret>\"; only a hash of the secret is stored."}},
                      "additionalProperties": False},
        "PaginationMeta": {
            "type": "object", "additionalProperties": False,
            "required": ["current_page", "from", "last_page", "path", "per_page", "to", "total", "next_cursor",
                         "prev_cursor"],
            "description": "In cursor mode current_page, from, to and last_page are null; with count=none "
                           "total and last_page are null.",
            "properties": {"current_page": {"type": ["integer", "null"], "minimum": 1}, "from": nullable_int,
                           "last_page": {"type": ["integer", "null"], "minimum": 1}, "path": {"type": "string"},
                           "per_page": {"type": "integer", "minimum": 1}, "to": nullable_int,
                           "total": {"type": ["integer", "null"], "minimum": 0},
                           "next_cursor": nullable_url, "prev_cursor": nullable_url}},
        "PaginationLinks": {
            "type": "object", "additionalProperties": False, "required": ["first", "last", "prev", "next", "path"],
            "properties": {"first": {"type": "string"}, "last": nullable_url, "prev": nullable_url,
                           "next": nullable_url, "path": {"type": "string"}}},
        "Timestamp": {"type": ["string", "null"], "format": "date-time",
                      "description": "Set by the server: ISO 8601, UTC, milliseconds."},
    }


def components() -> dict[str, Any]:
    """The static part of `components`; repository schemas are added by the document."""
    return {
        "schemas": {**_error_schemas(), **_shared_schemas()},
        "responses": _responses(),
        "securitySchemes": {"bearerAuth": {
            "type": "http", "scheme": "bearer", "bearerFormat": "<id>|<secret>",
            "description": "A token from POST /api/register, POST /api/login or `restify token:create EMAIL`."}},
    }
