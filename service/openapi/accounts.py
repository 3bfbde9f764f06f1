"""Path items of accounts by mail: forgot and reset a password, confirm an address, resend the link."""
from typing import Any

from service.config import Settings
from service.openapi.components import error_responses, json_content, schema_ref

Schema = dict[str, Any]
_TEXT = {"type": "string", "minLength": 1}


def schemas() -> dict[str, Schema]:
    text = {"message": {"type": "string"}}
    message: Schema = {"type": "object", "required": ["message"], "properties": text}
    return {
        "ForgotPassword": {"type": "object", "required": ["email"], "properties": {"email": _TEXT}},
        "ResetPassword": {"type": "object", "required": ["email", "token", "password", "password_confirmation"],
                          "properties": {"email": _TEXT, "token": {**_TEXT, "description": "From the reset mail."},
                                         "password": {**_TEXT, "writeOnly": True},
                                         "password_confirmation": {**_TEXT, "writeOnly": True}}},
        "AccountMessage": message,
        "VerificationState": {**message, "required": ["message", "verified"],
                              "properties": {**text, "verified": {"type": "boolean"}}},
    }


def _operation(operation_id: str, summary: str, status: int, answer: str, schema: str, errors: tuple[int, ...],
               security: list[Schema], **extra: Any) -> Schema:
    return {"operationId": operation_id, "tags": ["auth"], "summary": summary, **extra, "security": security,
            "responses": {str(status): {"description": answer, "content": json_content(schema_ref(schema))},
                          **error_responses(*errors)}}


def _body(name: str) -> Schema:
    return {"required": True, "content": {"application/json": {"schema": schema_ref(name)}}}


def _path_parameter(name: str, description: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}, "description": description}


def _query_parameter(name: str, description: str) -> Schema:
    return {"name": name, "in": "query", "required": True, "schema": {"type": "string"}, "description": description}


def paths(settings: Settings, token: list[Schema], no_token: list[Schema]) -> dict[str, Schema]:
    prefix = str(settings.get("server", "auth_prefix")).rstrip("/")
    return {
        f"{prefix}/forgot-password": {"post": _operation(
            "auth.forgotPassword", "Mail a password reset link (throttled; answered alike for unknown addresses)",
            202, "Accepted: a mail is queued when the address has an account.", "AccountMessage",
            (400, 413, 422, 429), no_token, requestBody=_body("ForgotPassword"))},
        f"{prefix}/reset-password": {"post": _operation(
            "auth.resetPassword", "Set a new password with the mailed token (single use); revokes every token of "
            "the user", 200, "The password is set.", "AccountMessage", (400, 413, 422, 429), no_token,
            requestBody=_body("ResetPassword"))},
        f"{prefix}/verify-email/resend": {"post": _operation(
            "auth.resendVerification", "Mail the logged-in user a new verification link (throttled)", 202,
            "Queued, or already verified (`verified`).", "VerificationState", (400, 429), token)},
        f"{prefix}/verify-email/{{id}}/{{hash}}": {"get": _operation(
            "auth.verifyEmail", "Confirm an address: the signed link of a verification mail", 200,
            "The address is verified.", "VerificationState", (400, 403), no_token, parameters=[
                _path_parameter("id", "The user's id."),
                _path_parameter("hash", "The SHA-256 (hex) of the address the link was sent to."),
                _query_parameter("expires", "Unix time the link expires at."),
                _query_parameter("signature", "HMAC-SHA256 (hex) of the path and `expires`.")])},
    }
