"""The OAuth endpoints over real HTTP: metadata, the 401's challenge, a whole grant, refresh rotation,
revocation, grants among the user's tokens; and each bad input refused with the RFCs' error, nothing
granted."""
import pytest

from tests.oauth.conftest import (REDIRECT, approve, authorize_query, code_for, fetch, open_page, pkce, redirected,
                                  register_client, token, tokens_for)
from tests.mcp.conftest import ok

TOKENS = "personal_access_tokens"


async def _stored_tokens(restify, user_id: str) -> list[dict]:
    from storage import Filter
    return await restify.db.collection(TOKENS).find(Filter(equals={"user_id": user_id}))


async def test_metadata_names_the_resource_its_server_and_the_abilities(api):
    base = api.client.get_url("")
    resource = (await api.get("/.well-known/oauth-protected-resource/mcp")).json
    assert resource["resource"] == f"{base}/mcp" and resource["authorization_servers"] == [base]
    assert resource["scopes_supported"][:3] == ["*", "comments:read", "comments:write"]
    server = (await api.get("/.well-known/oauth-authorization-server")).json
    assert (server["issuer"], server["token_endpoint"], server["code_challenge_methods_supported"]) == (
        base, f"{base}/oauth/token", ["S256"])
    assert server["client_id_metadata_document_supported"] is True


async def test_a_401_from_mcp_says_where_the_metadata_is(api):
    answer = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Accept": "application/json, text/event-stream"})
    assert answer.status == 401
    metadata = api.client.get_url("/.well-known/oauth-protected-resource/mcp")
    assert answer.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata}"'


@pytest.mark.parametrize("config", [{"mcp": {"auth": "token"}}], indirect=True)
async def test_with_mcp_auth_token_there_is_no_oauth(api):
    assert (await api.get("/.well-known/oauth-authorization-server")).status == 404
    answer = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert (answer.status, answer.headers["WWW-Authenticate"]) == (401, "Bearer")


async def test_a_grant_gives_a_token_for_mcp_only_listed_and_revoked_with_the_users_tokens(api, ann, connect):
    _, answer = await tokens_for(api, ann)
    assert (answer["token_type"], answer["expires_in"], answer["scope"]) == ("Bearer", 3600, "posts:read comments:read")
    async with connect(answer["access_token"]) as session:
        assert ok(await session.call_tool("posts-index-tool", {}))["data"] == []
    refused = await api.get("/api/restify/posts", token=answer["access_token"])
    assert (refused.status, refused.json) == (401, {"message": "This token is for another resource."})
    listed = (await api.get("/api/tokens", token=ann["token"])).json["data"]
    grant = next(t for t in listed if t.get("client"))
    assert (grant["name"], grant["abilities"], grant["client"]["name"]) == (
        "Test agent", ["posts:read", "comments:read"], "Test agent")
    assert (await api.delete(f"/api/tokens/{grant['id']}", token=ann["token"])).status == 204
    assert [t["id"] for t in (await api.get("/api/tokens", token=ann["token"])).json["data"]] == [listed[0]["id"]]
    again = await token(api, grant_type="refresh_token", refresh_token=answer["refresh_token"],
                        client_id=_client_of(grant))
    assert (again.status, again.json["error"]) == (400, "invalid_grant")


def _client_of(grant: dict) -> str:
    return grant["client"]["id"]


async def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_grant(api, ann, restify):
    client_id, first = await tokens_for(api, ann)
    second = await token(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id)
    assert second.status == 200, second.body
    assert second.json["refresh_token"] != first["refresh_token"]
    replayed = await token(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id)
    assert replayed.json == {"error": "invalid_grant",
                             "error_description": "The refresh token was used already; the grant is revoked."}
    assert [t for t in await _stored_tokens(restify, ann["id"]) if t.get("client") or t.get("grant_id")] == []
    after = await token(api, grant_type="refresh_token", refresh_token=second.json["refresh_token"],
                        client_id=client_id)
    assert (after.status, after.json["error"]) == (400, "invalid_grant")


@pytest.mark.parametrize("config", [{"mcp": {"auth": "oauth"}, "oauth": {"refresh_ttl": 1}}], indirect=True)
async def test_an_expired_refresh_token_is_refused(api, ann, restify):
    from storage import Filter
    client_id, first = await tokens_for(api, ann)
    grants = restify.db.collection(TOKENS)
    (grant,) = await grants.find(Filter(equals={"kind": "oauth_grant"}))
    await grants.update(grant["id"], {"expires_at": "2000-01-01T00:00:00.000000Z"})
    refused = await token(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id)
    assert refused.json == {"error": "invalid_grant", "error_description": "The refresh token has expired."}


async def test_revocation_of_a_refresh_token_ends_the_grant(api, ann, connect):
    client_id, answer = await tokens_for(api, ann)
    revoked = await fetch(api, "POST", "/oauth/revoke", {"token": answer["refresh_token"]})
    assert revoked.status == 200
    assert (await fetch(api, "POST", "/oauth/revoke", {"token": "nothing|known"})).status == 200
    refused = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token=answer["access_token"])
    assert refused.status == 401


async def _nothing_granted(restify, user: dict) -> None:
    assert [t for t in await _stored_tokens(restify, user["id"]) if t.get("client") or t.get("grant_id")] == []


async def test_a_wrong_or_missing_verifier_is_refused(api, ann, restify):
    client_id = await register_client(api)
    proof = pkce()
    code = await code_for(api, ann, client_id, proof)
    missing = await token(api, grant_type="authorization_code", code=code, client_id=client_id, redirect_uri=REDIRECT)
    assert missing.json == {"error": "invalid_request",
                            "error_description": "The code_verifier parameter is required (PKCE)."}
    wrong = await token(api, grant_type="authorization_code", code=code, code_verifier=pkce().verifier,
                        client_id=client_id, redirect_uri=REDIRECT)
    assert (wrong.status, wrong.json) == (400, {"error": "invalid_grant", "error_description":
                                                "The code_verifier does not match the code_challenge."})
    await _nothing_granted(restify, ann)


async def test_a_plain_challenge_is_refused_at_the_client(api, ann):
    client_id = await register_client(api)
    page, _, _ = await open_page(api, authorize_query(api, client_id, pkce().challenge, code_challenge_method="plain"))
    assert redirected(page) == {"error": "invalid_request", "state": "st-1",
                                "error_description": "PKCE is required: code_challenge_method must be S256."}


async def test_a_code_works_once(api, ann, restify):
    client_id = await register_client(api)
    proof = pkce()
    code = await code_for(api, ann, client_id, proof)
    form = {"grant_type": "authorization_code", "code": code, "code_verifier": proof.verifier,
            "client_id": client_id, "redirect_uri": REDIRECT}
    assert (await token(api, **form)).status == 200
    again = await token(api, **form)
    assert again.json == {"error": "invalid_grant",
                          "error_description": "The authorization code is invalid, expired or used already."}


async def test_a_redirect_uri_not_in_the_clients_metadata_is_refused_on_the_page(api, ann):
    client_id = await register_client(api)
    page, csrf, _ = await open_page(api, authorize_query(api, client_id, pkce().challenge,
                                                         redirect_uri="https://evil.example/cb"))
    assert page.status == 400 and "Location" not in page.headers and csrf == ""
    assert "The redirect_uri is not one of the client&#x27;s redirect URIs." in page.body.decode()


async def test_a_resource_of_another_server_is_refused(api, ann, restify):
    client_id = await register_client(api)
    page, _, _ = await open_page(api, authorize_query(api, client_id, pkce().challenge,
                                                      resource="https://other.example/mcp"))
    assert redirected(page)["error"] == "invalid_target"
    proof = pkce()
    code = await code_for(api, ann, client_id, proof)
    refused = await token(api, grant_type="authorization_code", code=code, code_verifier=proof.verifier,
                          client_id=client_id, redirect_uri=REDIRECT, resource="https://other.example/mcp")
    assert refused.json["error"] == "invalid_target"
    await _nothing_granted(restify, ann)


async def test_the_page_refuses_framing_and_a_post_without_its_csrf_token(api, ann, restify):
    client_id = await register_client(api)
    query = authorize_query(api, client_id, pkce().challenge)
    page, csrf, cookie = await open_page(api, query)
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "HttpOnly" in page.headers["Set-Cookie"] and "SameSite=Strict" in page.headers["Set-Cookie"]
    form = {**query, "email": ann["email"], "password": "secret-pass", "decision": "approve", "scopes": ["posts:read"]}
    forged = await fetch(api, "POST", "/oauth/authorize", {**form, "csrf": csrf})  # no cookie: another site's form
    assert forged.status == 403 and "Location" not in forged.headers
    await _nothing_granted(restify, ann)


async def test_wrong_credentials_show_the_page_again_and_a_refusal_goes_back_to_the_client(api, ann, restify):
    client_id = await register_client(api)
    query = authorize_query(api, client_id, pkce().challenge)
    wrong = await approve(api, ann, query, password="not-the-password")
    assert wrong.status == 422 and "These credentials do not match our records." in wrong.body.decode()
    page, csrf, cookie = await open_page(api, query)
    refused = await fetch(api, "POST", "/oauth/authorize", {**query, "csrf": csrf, "decision": "refuse"},
                          {"Cookie": cookie})
    assert redirected(refused)["error"] == "access_denied"
    await _nothing_granted(restify, ann)


async def test_the_user_may_grant_fewer_scopes_than_asked(api, ann):
    client_id = await register_client(api)
    proof = pkce()
    sent = redirected(await approve(api, ann, authorize_query(api, client_id, proof.challenge), scopes=["posts:read"]))
    answer = await token(api, grant_type="authorization_code", code=sent["code"], code_verifier=proof.verifier,
                         client_id=client_id, redirect_uri=REDIRECT)
    assert answer.json["scope"] == "posts:read"


@pytest.mark.parametrize("config", [{"mcp": {"auth": "oauth"}, "oauth": {"registrations_per_address": 2}}],
                         indirect=True)
async def test_client_registration_is_throttled(api):
    for _ in range(2):
        await register_client(api)
    refused = await api.post("/oauth/register", {"redirect_uris": [REDIRECT]})
    assert refused.status == 429 and refused.headers["Retry-After"]


async def test_a_registration_with_a_bad_redirect_uri_is_refused(api):
    refused = await api.post("/oauth/register", {"redirect_uris": ["http://evil.example/cb"]})
    assert refused.json == {"error": "invalid_redirect_uri",
                            "error_description": "The redirect URI http://evil.example/cb is not allowed."}


async def test_a_token_bound_to_another_resource_is_refused_at_mcp(api, ann, restify):
    _, answer = await tokens_for(api, ann)
    token_id = answer["access_token"].split("|")[0]
    await restify.db.collection(TOKENS).update(token_id, {"resource": "https://other.example/mcp"})
    refused = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token=answer["access_token"])
    assert (refused.status, refused.json) == (401, {"message": "This token is for another resource."})
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
