"""OAuth fixtures: the service with `mcp.auth = "oauth"`, a client registered over HTTP, and the
authorization page driven as a browser would (its cookie, its CSRF field, no redirect followed)."""
import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from tests.conftest import Response
from tests.mcp.conftest import connect, mcp_endpoint, mcp_url  # noqa: F401 - the SDK's client over /mcp

REDIRECT = "http://127.0.0.1:33418/callback"  # never served: the tests read what is sent to it


@pytest.fixture
def config(config, request):
    """OAuth on; client metadata documents may come from `localhost` (the tests' own servers)."""
    return {**config, "mcp": {"auth": "oauth"}, "oauth": {"private_hosts": ["localhost"]},
            **getattr(request, "param", {})}


@dataclass
class Pkce:
    verifier: str
    challenge: str


def pkce() -> Pkce:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return Pkce(verifier, challenge)


async def fetch(api, method: str, path: str, body: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Response:
    """A request that follows no redirect (the client's redirect URI is not a server here)."""
    sent = dict(headers or {})
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    result = await api.client.fetch(path, method=method, body=urlencode(body, doseq=True) if body is not None else None,
                                    headers=sent, follow_redirects=False, raise_error=False)
    return Response(result.code, result.body or b"", result.headers)


async def register_client(api, redirect_uris: list[str] | None = None) -> str:
    response = await api.post("/oauth/register", {"client_name": "Test agent",
                                                  "redirect_uris": redirect_uris or [REDIRECT]})
    assert response.status == 201, response.body
    return response.json["client_id"]


def authorize_query(api, client_id: str, challenge: str, **overrides: str) -> dict[str, str]:
    return {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st-1",
            "code_challenge": challenge, "code_challenge_method": "S256", "scope": "posts:read comments:read",
            "resource": api.client.get_url("/mcp"), **overrides}


async def open_page(api, query: dict[str, str]) -> tuple[Response, str, str]:
    """GET the page: (response, the CSRF field's value, the cookie to send back)."""
    page = await fetch(api, "GET", "/oauth/authorize?" + urlencode(query))
    found = re.search(r'name="csrf" value="([^"]+)"', page.body.decode())
    cookie = page.headers.get("Set-Cookie", "").split(";")[0]
    return page, unescape(found.group(1)) if found else "", cookie


async def approve(api, user: dict, query: dict[str, str], scopes: list[str] | None = None,
                  password: str = "secret-pass") -> Response:
    """Signs in and approves on the page, as its form sends it; the answer (a redirect, or the page)."""
    page, csrf, cookie = await open_page(api, query)
    assert page.status == 200, page.body
    form = {**query, "csrf": csrf, "email": user["email"], "password": password, "decision": "approve",
            "scopes": scopes if scopes is not None else query["scope"].split()}
    return await fetch(api, "POST", "/oauth/authorize", form, {"Cookie": cookie})


def redirected(response: Response) -> dict[str, str]:
    """The query the browser is sent back to the client with."""
    assert response.status == 302, response.body
    location = response.headers["Location"]
    assert location.startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def code_for(api, user: dict, client_id: str, proof: Pkce, **overrides: str) -> str:
    sent = redirected(await approve(api, user, authorize_query(api, client_id, proof.challenge, **overrides)))
    assert sent["state"] == "st-1"
    return sent["code"]


async def token(api, **form: str) -> Response:
    return await fetch(api, "POST", "/oauth/token", form)


async def tokens_for(api, user: dict, client_id: str | None = None) -> tuple[str, dict[str, Any]]:
    """(client_id, the token endpoint's answer) for a fresh grant of `user`."""
    client_id = client_id or await register_client(api)
    proof = pkce()
    code = await code_for(api, user, client_id, proof)
    answer = await token(api, grant_type="authorization_code", code=code, code_verifier=proof.verifier,
                         client_id=client_id, redirect_uri=REDIRECT, resource=api.client.get_url("/mcp"))
    assert answer.status == 200, answer.body
    return client_id, answer.json
