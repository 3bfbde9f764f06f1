"""Login throttling, token expiry and revocation, CORS, query-string bounds, and no leaks."""
from datetime import datetime, timedelta

import pytest

from service.core.operations import auth
from service.core.reading.serializer import iso

PASSWORD = "secret-pass"


@pytest.fixture
def config(config):
    config["auth"].update({"login_attempts_per_account": 3, "login_attempts_per_address": 5,
                           "login_window_seconds": 60})
    return config


async def _fail_login(api, email, times=1):
    for _ in range(times):
        response = await api.post("/api/login", {"email": email, "password": "wrong-password"})
        assert response.status == 401


async def test_login_is_throttled_per_account_with_retry_after(api):
    user = await api.register("Ann", password=PASSWORD)
    await _fail_login(api, user["email"], times=3)
    refused = await api.post("/api/login", {"email": user["email"], "password": PASSWORD})
    assert refused.status == 429
    retry = int(refused.headers["Retry-After"])
    assert 1 <= retry <= 61
    assert refused.json == {"message": f"Too many attempts. Try again in {retry} seconds."}


async def test_the_account_key_ignores_case_and_another_account_is_not_throttled(api):
    ann = await api.register("Ann", password=PASSWORD)
    bob = await api.register("Bob", password=PASSWORD)
    await _fail_login(api, ann["email"].upper(), times=3)
    assert (await api.post("/api/login", {"email": ann["email"], "password": PASSWORD})).status == 429
    assert (await api.post("/api/login", {"email": bob["email"], "password": PASSWORD})).status == 200


async def test_login_is_throttled_per_address_across_accounts(api):
    for index in range(5):
        await _fail_login(api, f"nobody{index}@example.com")
    user = await api.register("Ann", password=PASSWORD)
    response = await api.post("/api/login", {"email": user["email"], "password": PASSWORD})
    assert response.status == 429 and "Retry-After" in response.headers


async def test_a_successful_login_clears_the_account_failures(api):
    user = await api.register("Ann", password=PASSWORD)
    await _fail_login(api, user["email"], times=2)
    assert (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).status == 200
    await _fail_login(api, user["email"], times=2)
    assert (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).status == 200


async def test_tokens_expire_after_the_configured_ttl(api, restify, db):
    restify.settings.set("auth", "token_ttl", 600)
    user = await api.register("Ann")
    assert (await api.get("/api/restify/profile", token=user["token"])).status == 200
    tokens, token_id = db.collection("personal_access_tokens"), user["token"].split("|")[0]
    stored = await tokens.find_by_id(token_id)
    assert moment(stored["expires_at"]) - moment(stored["created_at"]) == timedelta(seconds=600)
    # Ten minutes later, without waiting them: the token's times are moved back by its ttl.
    await tokens.update(token_id, {key: iso(moment(stored[key]) - timedelta(seconds=600))
                                   for key in ("created_at", "expires_at")})
    expired = await api.get("/api/restify/profile", token=user["token"])
    assert (expired.status, expired.json) == (401, {"message": "Unauthenticated."})


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_tokens_without_ttl_do_not_expire(api, db):
    user = await api.register("Ann")
    stored = await db.collection("personal_access_tokens").find_by_id(user["token"].split("|")[0])
    assert stored["expires_at"] is None


async def test_revoking_a_users_tokens_refuses_all_of_them(api, restify):
    user = await api.register("Ann", password=PASSWORD)
    second = (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).json["meta"]["token"]
    assert await auth.revoke_for_email(restify, user["email"]) == 2
    for token in (user["token"], second):
        assert (await api.get("/api/restify/profile", token=token)).status == 401


async def test_cors_is_off_by_default(api):
    response = await api.get("/api/restify/posts", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = await api.request("OPTIONS", "/api/restify/posts", headers={"Origin": "https://evil.example"})
    assert preflight.status == 405


async def test_cors_answers_configured_origins_only(api, restify):
    restify.settings.set("cors", "allowed_origins", ["https://app.example"])
    allowed = await api.get("/api/restify/posts", headers={"Origin": "https://app.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example"
    preflight = await api.request("OPTIONS", "/api/restify/posts", headers={"Origin": "https://app.example"})
    assert preflight.status == 204
    assert preflight.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type"
    other = await api.get("/api/restify/posts", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    error = await api.get("/api/restify/nothing", headers={"Origin": "https://app.example"})
    assert error.status == 404 and error.headers["Access-Control-Allow-Origin"] == "https://app.example"


async def test_a_query_string_over_the_limit_is_414(api):
    response = await api.get("/api/restify/posts?search=" + "a" * 9000)
    assert (response.status, response.json) == (414, {"message": "The query string is too long."})


async def test_no_response_leaks_password_or_token_hashes(api, db):
    user = await api.register("Ann", password=PASSWORD)
    await api.post("/api/restify/posts", {"title": "Hi"}, token=user["token"])
    stored = await db.collection("users").find_by_id(user["id"])
    token = await db.collection("personal_access_tokens").find_by_id(user["token"].split("|")[0])
    secrets = (stored["password"], token["token_hash"])
    paths = ["/api/restify/users", f"/api/restify/users/{user['id']}", "/api/restify/profile?include=posts",
             "/api/restify/posts?related=user", "/api/restify/users/" + user["id"] + "?related=posts"]
    bodies = [(await api.get(path, token=user["token"])).body for path in paths]
    bodies.append((await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).body)
    bodies.append((await api.post("/graphql", {"query": "{ userList { id name email } }"}, token=user["token"])).body)
    for body in bodies:
        assert all(secret.encode() not in body for secret in secrets)
        assert b"Traceback" not in body and b"/work/" not in body
