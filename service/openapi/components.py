"""Shared components: the error bodies and responses of `service.core.errors`, the
pagination envelope's parts, authorization flags and the bearer security scheme."""
from typing import Any

from service.core import errors

Schema = dict[str, Any]
JSON = "application/json"


def ref(kind: str, name: str) -> Schema:
    return {"$ref": f"#/components/{kind}/{name}"}


def schema_ref(name: str) -> Schema:
    return ref("schemas", name)


def json_content(schema: Schema) -> dict[str, Any]:
    return {JSON: {"schema": schema}}


# -- errors -----------------------------------------------------------------------------------

# status -> (component name, error class, body schema, description)
ERRORS: dict[int, tuple[str, type[errors.RestifyError], str, str]] = {
    400: ("BadRequest", errors.BadRequest, "BadRequestError",
          "Malformed JSON, a body that is not an object, or a malformed query (page, perPage, sort, related...)."),
    401: ("Unauthenticated", errors.Unauthenticated, "Error",
          ("No valid bearer token where one is needed, an invalid token on any route, a guest refused by a "
           "policy, or (login) credentials that do not match.")),
    403: ("Forbidden", errors.Forbidden, "Error", "A logged-in user refused by the repository's policy."),
    404: ("NotFound", errors.NotFound, "Error", "No such resource or record."),
    405: ("MethodNotAllowed", errors.MethodNotAllowed, "Error",
          "The path exists but not with this method (also CORS preflights while CORS is off)."),
    412: ("PreconditionFailed", errors.PreconditionFailed, "Error",
          "If-Match named another version: the record was changed since it was read; nothing was written."),
    413: ("PayloadTooLarge", errors.PayloadTooLarge, "Error",
          "The body is above server.max_body_bytes (JSON) or server.max_upload_bytes (multipart)."),
    414: ("UriTooLong", errors.UriTooLong, "Error", "The query string is above server.max_query_bytes."),
    422: ("ValidationFailed", errors.ValidationFailed, "ValidationError",
          "Field errors, one message per field: the first rule that failed."),
    429: ("TooManyRequests", errors.TooManyRequests, "Error",
          ("Too many logins for this account or this address, too many registrations from this address, "
           "the password hashing queue is full, or an expensive query (a search, a relation sort, a long in "
           "list, a deep page) while the caller has one running or the server runs as many as it takes; retry "
           "after Retry-After seconds.")),
    503: ("ServiceUnavailable", errors.ServiceUnavailable, "Error",
          ("The database is unreachable; retry later. Or, for an answer over 64 KiB, the server is busy sending "
           "other answers (server.max_pending_bytes); retry after Retry-After seconds.")),
}

# What every route may answer before its operation runs (JsonHandler.prepare): an invalid
# bearer token, an oversized query string, a database that went away while checking the token.
COMMON = (401, 414, 503)


def error_responses(*statuses: int) -> dict[str, Schema]:
    """`{"400": {"$ref": ...}, ...}` for the given statuses plus the common ones, sorted."""
    return {str(status): ref("responses", ERRORS[status][0]) for status in sorted(set(statuses) | set(COMMON))}


def _error_example(status: int) -> dict[str, Any]:
    error_class = ERRORS[status][1]
    if error_class is errors.ValidationFailed:
        return errors.ValidationFailed({"title": ["The title field is required."]}).body()
    if error_class is errors.TooManyRequests:
        return errors.TooManyRequests(retry_after=42).body()
    return error_class().body()


def _responses() -> dict[str, Schema]:
    responses: dict[str, Schema] = {}
    for status, (name, _, body, description) in ERRORS.items():
        response: Schema = {"description": description,
                            "content": {JSON: {"schema": schema_ref(body), "example": _error_example(status)}}}
        if status in (429, 503):
            response["headers"] = {"Retry-After": {"description": "Seconds to wait before trying again.",
                                                   "schema": {"type": "integer", "minimum": 1}}}
        responses[name] = response
    return responses


def _error_schemas() -> dict[str, Schema]:
    bag = {"type": "object", "description": "Field name -> its messages.",
           "additionalProperties": {"type": "array", "items": {"type": "string"}}}
    return {
        "Error": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}},
                  "additionalProperties": False},
        "ErrorBag": bag,
        "BadRequestError": {"type": "object", "required": ["message"],
                            "properties": {"message": {"type": "string"}, "errors": schema_ref("ErrorBag")},
                            "additionalProperties": False},
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
