"""The authorization request: checked, shown to the user, approved (a code) or refused.

A request names its client and a redirect URI from the client's metadata; until both are known to be
right nothing is sent to that URI (the page says what is wrong). After that, a refusal goes back to
the client as `?error=...&state=...` (RFC 6749 section 4.1.2.1). PKCE is `S256` only and `resource`
(RFC 8707) must be this service's `/mcp`. Approving takes the user's email and password, counted by
the same throttles as login, and may grant fewer scopes than asked, never more.
"""
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from service.core.declarations import EVERYTHING, Context, Restify
from service.core.identity import issue_code
from service.core.kernel import OAuthError, ValidationFailed
from service.core.operations.auth import signed_in
from service.core.operations.oauth import Fetch, find_client, resource_url
from service.core.operations.tokens import checked_abilities

CHALLENGE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
MAX_STATE = 1000
PARAMETERS = ("response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
              "code_challenge_method", "resource")


class Refused(Exception):
    """A refusal to send back to the client's redirect URI (which was checked), as its query says."""

    def __init__(self, redirect_to: str) -> None:
        super().__init__(redirect_to)
        self.redirect_to = redirect_to


@dataclass(frozen=True)
class Pending:
    """An authorization request that passed every check: what the page shows and the form sends back."""
    client: dict[str, Any]
    redirect_uri: str
    scopes: list[str]
    state: str | None
    challenge: str
    resource: str
    params: dict[str, str]  # the request's own parameters, carried by the form

    @property
    def redirect_host(self) -> str:
        return urlsplit(self.redirect_uri).netloc or self.redirect_uri


def back_to(redirect_uri: str, values: dict[str, str | None]) -> str:
    """`redirect_uri` with `values` added to its query."""
    query = urlencode({k: v for k, v in values.items() if v is not None})
    return f"{redirect_uri}{'&' if '?' in redirect_uri else '?'}{query}"


async def check(app: Restify, params: dict[str, str], context: Context, fetch: Fetch) -> Pending:
    """The request as Pending, or OAuthError (shown on the page) / Refused (sent to the client)."""
    app = app.pinned()
    client = await find_client(app, params.get("client_id"), fetch)
    redirect_uri = params.get("redirect_uri") or ""
    if redirect_uri not in client["redirect_uris"]:
        raise OAuthError("invalid_request", "The redirect_uri is not one of the client's redirect URIs.")
    state = params.get("state")

    def refuse(code: str, message: str) -> Refused:
        return Refused(back_to(redirect_uri, {"error": code, "error_description": message,
                                                             "state": state}))
    if state is not None and len(state) > MAX_STATE:
        raise refuse("invalid_request", f"The state may not be longer than {MAX_STATE} characters.")
    if params.get("response_type") != "code":
        raise refuse("unsupported_response_type", "The response_type must be code.")
    if params.get("code_challenge_method") != "S256":
        raise refuse("invalid_request", "PKCE is required: code_challenge_method must be S256.")
    if not CHALLENGE.match(params.get("code_challenge") or ""):
        raise refuse("invalid_request", "The code_challenge must be 43 to 128 unreserved characters.")
    if params.get("resource") != resource_url(app, context):
        raise refuse("invalid_target", f"The resource must be {resource_url(app, context)}.")
    try:
        scopes = checked_abilities(app, (params.get("scope") or EVERYTHING).split(), Context(door="console"))
    except ValidationFailed as error:
        raise refuse("invalid_scope", " ".join(error.errors.get("abilities", []))) from None
    return Pending(client, redirect_uri, scopes, state, str(params["code_challenge"]), str(params["resource"]),
                   {name: params[name] for name in PARAMETERS if params.get(name) is not None})


async def approve(app: Restify, pending: Pending, form: dict[str, Any], context: Context) -> str:
    """Where the browser goes next: the client's redirect URI with a code (approved) or with
    `access_denied`. Wrong credentials raise ValidationFailed for the page to show."""
    app = app.pinned()
    if form.get("decision") != "approve":
        return back_to(pending.redirect_uri, {"error": "access_denied", "error_description": "The user refused.",
                                              "state": pending.state})
    email, password = form.get("email"), form.get("password")
    if not isinstance(email, str) or not email or not isinstance(password, str) or not password:
        raise ValidationFailed({"email": ["Enter your email and password."]})
    user = await signed_in(app, email, password, context)
    if user is None:
        raise ValidationFailed({"email": ["These credentials do not match our records."]})
    chosen = [scope for scope in pending.scopes if scope in form.get("scopes", [])]
    if not chosen:
        raise ValidationFailed({"scopes": ["Choose at least one permission, or refuse."]})
    code = await issue_code(app, {"user_id": user["id"], "client_id": pending.client["client_id"],
                                  "client_name": pending.client["client_name"], "redirect_uri": pending.redirect_uri,
                                  "scopes": chosen, "resource": pending.resource, "challenge": pending.challenge})
    return back_to(pending.redirect_uri, {"code": code, "state": pending.state})
