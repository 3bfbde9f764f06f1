"""The signed-in user's own tokens: `GET/POST <auth>/tokens`, `DELETE <auth>/tokens/{id}`
(service/core/operations/tokens.py)."""
from typing import Any

from service.config import Settings
from service.core.operations.tokens import MAX_ABILITIES, MAX_EXPIRES_IN
from service.openapi.components import error_responses, json_content, schema_ref

Schema = dict[str, Any]
_TOKEN: list[Schema] = [{"bearerAuth": []}]
_WHEN = {"type": ["string", "null"], "format": "date-time"}
_DESCRIBED = ('"*" (everything the user may do), or "<repository>:read", "<repository>:write", '
              '"<repository>:<action key>".')
_ABILITIES: Schema = {"type": "array", "minItems": 1, "maxItems": MAX_ABILITIES, "items": {"type": "string"},
              "description": _DESCRIBED}


def schemas() -> dict[str, Schema]:
    token = {"type": "object", "additionalProperties": False,
             "required": ["id", "name", "abilities", "created_at", "last_used_at", "expires_at", "current"],
             "properties": {"id": {"type": "string"}, "name": {"type": ["string", "null"]}, "abilities": _ABILITIES,
                            "created_at": _WHEN, "last_used_at": {**_WHEN, "description": "Updated at most once a "
                                                                  "minute."},
                            "expires_at": {**_WHEN, "description": "null: until revoked."},
                            "current": {"type": "boolean", "description": "The token this request carries."},
                            "client": {"type": "object", "additionalProperties": False, "required": ["id", "name"],
                                       "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                                       "description": "An OAuth grant (or its access token): the client it was "
                                                      "granted to. Revoking either revokes the grant."}},
             "description": "One of the user's bearer tokens; never its secret."}
    return {
        "AccessToken": token,
        "AccessTokenList": {"type": "object", "required": ["data"], "additionalProperties": False,
                            "properties": {"data": {"type": "array", "items": schema_ref("AccessToken")}}},
        "NewAccessToken": {"type": "object", "required": ["data", "meta"], "additionalProperties": False,
                           "properties": {"data": schema_ref("AccessToken"), "meta": {
                               "type": "object", "required": ["token"], "additionalProperties": False,
                               "properties": {"token": {"type": "string", "pattern": "^[^|]+\\|.+$",
                                                        "description": 'The bearer token, "<id>|<secret>": '
                                                                       "shown this once."}}}}},
        "AccessTokenStore": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 255},
            "abilities": {**_ABILITIES, "description": _DESCRIBED + " Default: those of the token "
                          "that asks; never more than it has."},
            "expires_in": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_EXPIRES_IN,
                           "description": "Seconds; default auth.token_ttl (none: until revoked)."}}},
    }


def paths(settings: Settings) -> dict[str, Schema]:
    prefix = str(settings.get("server", "auth_prefix")).rstrip("/")

    def operation(operation_id: str, summary: str, responses: dict[str, Schema], **extra: Any) -> Schema:
        return {"operationId": operation_id, "tags": ["auth"], "summary": summary, **extra, "security": _TOKEN,
                "responses": responses}

    return {
        f"{prefix}/tokens": {
            "get": operation("tokens.index", "Your tokens (no repository ability needed)",
                             {"200": {"description": "Every token of the user, oldest first.",
                                      "content": json_content(schema_ref("AccessTokenList"))},
                              **error_responses()}),
            "post": operation("tokens.store", "Create a personal access token",
                              {"201": {"description": "The token, and its secret in meta.token (shown once).",
                                       "content": json_content(schema_ref("NewAccessToken"))},
                               **error_responses(400, 403, 413, 422)},
                              requestBody={"required": True,
                                           "content": json_content(schema_ref("AccessTokenStore"))}),
        },
        f"{prefix}/tokens/{{id}}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                            "description": "The token's id (the part before `|`)."}],
            "delete": operation("tokens.delete", "Revoke one of your tokens (another user's is a 404)",
                                {"204": {"description": "Revoked; no body."}, **error_responses(404)}),
        },
    }
