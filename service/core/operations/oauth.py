"""OAuth 2.1 for `/mcp`: the service is the protected resource and its own authorization server.

    GET  /.well-known/oauth-protected-resource[/mcp]   RFC 9728: the resource, its server, the scopes
    GET  /.well-known/oauth-authorization-server       RFC 8414: the endpoints below
    POST /oauth/register                               RFC 7591: a client for those without a metadata URL
    GET  /oauth/authorize (+ POST)                     the sign-in and consent page (oauth_authorize)
    POST /oauth/token, /oauth/revoke                   codes and refresh tokens (oauth_token)

Scopes are the abilities of tokens (`*`, `<repository>:read`, `<repository>:write`, `<repository>:<action>`).
A client is a Client ID Metadata Document (its HTTPS URL is the `client_id`; the HTTP door fetches it)
or a client registered here (`oauth_clients`). Refusals are OAuthError, answered in the RFCs' shape.
"""
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from service.core.declarations import EVERYTHING, READ, WRITE, Context, Restify
from service.core.identity import client_registration_attempt
from service.core.kernel import OAuthError
from storage import is_valid_id

CLIENTS = "oauth_clients"
RESOURCE_PATH = "/mcp"
MAX_REDIRECT_URIS = 10
MAX_TEXT = 2000  # a URI or a name, in characters

# Fetches a client metadata document by its URL (the HTTP door's `client_metadata.fetch`).
Fetch = Callable[[str], Awaitable[dict[str, Any]]]


def base_url(app: Restify, context: Context) -> str:
    """`server.base_url`, else the address the request came to (development)."""
    return str(app.settings.value("server", "base_url")).rstrip("/") or context.base_url


def resource_url(app: Restify, context: Context) -> str:
    return base_url(app, context) + RESOURCE_PATH


def uses_oauth(app: Restify) -> bool:
    """`mcp.auth`; empty: OAuth when `server.base_url` is a public HTTPS address."""
    chosen = str(app.settings.value("mcp", "auth")).strip().lower()
    if chosen:
        return chosen == "oauth"
    base = urlsplit(str(app.settings.value("server", "base_url")))
    return base.scheme == "https" and base.hostname not in (None, "localhost", "127.0.0.1", "::1")


def metadata_url(app: Restify, context: Context) -> str:
    """Where the protected resource metadata of `/mcp` is (RFC 9728's path form)."""
    return f"{base_url(app, context)}/.well-known/oauth-protected-resource{RESOURCE_PATH}"


def scopes_supported(app: Restify) -> list[str]:
    """Every ability a client may ask for by name: `*`, and each repository's read and write."""
    names = sorted(app.registry.resources)
    return [EVERYTHING, *(f"{name}:{kind}" for name in names for kind in (READ, WRITE))]


def protected_resource(app: Restify, context: Context) -> dict[str, Any]:
    return {"resource": resource_url(app, context), "authorization_servers": [base_url(app, context)],
            "scopes_supported": scopes_supported(app), "bearer_methods_supported": ["header"],
            "resource_name": str(app.settings.value("openapi", "title"))}


def authorization_server(app: Restify, context: Context) -> dict[str, Any]:
    base = base_url(app, context)
    return {"issuer": base, "authorization_endpoint": f"{base}/oauth/authorize",
            "token_endpoint": f"{base}/oauth/token", "registration_endpoint": f"{base}/oauth/register",
            "revocation_endpoint": f"{base}/oauth/revoke", "scopes_supported": scopes_supported(app),
            "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "client_id_metadata_document_supported": True}


def _text(value: Any, name: str, code: str = "invalid_client_metadata") -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
        raise OAuthError(code, f"The {name} must be a string of 1 to {MAX_TEXT} characters.")
    return value


def redirect_uris(document: dict[str, Any]) -> list[str]:
    """The client's redirect URIs: absolute, no fragment; HTTPS, or HTTP on a loopback address
    (native apps), or a private-use scheme (`com.example.app:/callback`)."""
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs.")
    for uri in uris:
        parts = urlsplit(_text(uri, "redirect URI", "invalid_redirect_uri"))
        loopback = parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1", "::1")
        if parts.fragment or not parts.scheme or (parts.scheme == "http" and not loopback) or (
                parts.scheme == "https" and not parts.hostname):
            raise OAuthError("invalid_redirect_uri", f"The redirect URI {uri} is not allowed.")
    return list(uris)


def described_client(document: dict[str, Any], client_id: str) -> dict[str, Any]:
    """What the service keeps of a client: its id, name and redirect URIs."""
    name = document.get("client_name")
    return {"client_id": client_id, "client_name": name if isinstance(name, str) and name else client_id,
            "redirect_uris": redirect_uris(document)}


async def register_client(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """RFC 7591: a public client (PKCE, no secret), throttled per client address."""
    app = app.pinned()
    await client_registration_attempt(app, context.extras.get("address"))
    method = payload.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise OAuthError("invalid_client_metadata", "Only public clients (token_endpoint_auth_method none).")
    grants = payload.get("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grants, list) or not set(grants) <= {"authorization_code", "refresh_token"}:
        raise OAuthError("invalid_client_metadata", "grant_types may be authorization_code and refresh_token.")
    client = described_client(payload, "")
    name = payload.get("client_name")
    stored = await app.db.collection(CLIENTS).insert({
        "client_name": _text(name, "client_name") if name is not None else "",
        "redirect_uris": client["redirect_uris"], "created_at": datetime.now(timezone.utc).isoformat(),
        "registered_from": context.extras.get("address")})
    return {"client_id": stored["id"], "client_id_issued_at": int(datetime.now(timezone.utc).timestamp()),
            "client_name": stored["client_name"] or stored["id"], "redirect_uris": stored["redirect_uris"],
            "grant_types": grants, "response_types": ["code"], "token_endpoint_auth_method": "none"}


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


async def find_client(app: Restify, client_id: Any, fetch: Fetch) -> dict[str, Any]:
    """The client `client_id` names: its metadata document (fetched) or its registration."""
    client_id = _text(client_id, "client_id", "invalid_client")
    if is_metadata_url(client_id):
        document = await fetch(client_id)
        if document.get("client_id") != client_id:
            raise OAuthError("invalid_client", "The client metadata document names another client_id.")
        return described_client(document, client_id)
    stored = await app.db.collection(CLIENTS).find_by_id(client_id) if is_valid_id(client_id) else None
    if stored is None:
        raise OAuthError("invalid_client", "No such client.")
    return {"client_id": client_id, "client_name": stored.get("client_name") or client_id,
            "redirect_uris": list(stored.get("redirect_uris", []))}
