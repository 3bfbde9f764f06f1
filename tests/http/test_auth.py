"""Registration, login, logout and bearer tokens; the `auth:token` route guard."""
import asyncio
import hashlib
import re

import pytest

import storage
from service.core.declarations.registry import load_app
from service.core.operations import auth

PREFIX = "/api/restify"
INVALID = "The given data was invalid."
UNAUTHENTICATED = {"message": "Unauthenticated."}
BAD_CREDENTIALS = {"message": "These credentials do not match our records."}
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
PASSWORD = "secret-pass"


def invalid(**errors: str) -> dict:
    return {"message": INVALID, "errors": {name: [message] for name, message in errors.items()}}


def registration(name: str = "Ann", email: str = "ann@example.com", password: str = PASSWORD, **extra) -> dict:
    return {"name": name, "email": email, "password": password, "password_confirmation": password, **extra}


async def count(db, name: str, **equals) -> int:
    return await db.collection(name).count(storage.Filter(equals=equals))


async def assert_nothing_written(db) -> None:
    assert await count(db, "users") == 0
    assert await count(db, "personal_access_tokens") == 0


def self_flags(version: int = 1) -> dict:
    """A user looking at their own account: the demo UserPolicy never allows store."""
    return {"authorizedToShow": True, "authorizedToStore": False, "authorizedToUpdate": True,
            "authorizedToDelete": True, "version": version}


# -- register ----------------------------------------------------------------------------
async def test_register_answers_201_with_the_user_unwrapped_and_a_token(api, db):
    response = await api.post("/api/register", registration(bio="Hi", rogue="x"))
    assert response.status == 201
    body = response.json
    token = body["meta"].pop("token")
    assert body == {
        "id": body["id"],
        "type": "users",
        "attributes": {"name": "Ann", "email": "ann@example.com", "bio": "Hi", "avatar": None, "post_count": 0,
                       "created_at": body["attributes"]["created_at"],
                       "updated_at": body["attributes"]["updated_at"]},
        "meta": self_flags(),
    }
    assert ISO.match(body["attributes"]["created_at"])
    token_id, _, secret = token.partition("|")
    assert storage.is_valid_id(token_id) and len(secret) >= 32
    stored_user = await db.collection("users").find_by_id(body["id"])
    assert set(stored_user) == {"id", "name", "email", "password", "bio", "created_at", "updated_at", storage.VERSION}


async def test_register_stores_only_a_hash_of_the_token(api, db):
    body = (await api.post("/api/register", registration())).json
    token_id, _, secret = body["meta"]["token"].partition("|")
    stored = await db.collection("personal_access_tokens").find_by_id(token_id)
    assert stored["user_id"] == body["id"]
    assert stored["token_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in repr(stored)
    assert await count(db, "personal_access_tokens") == 1


async def test_register_stores_the_password_as_an_argon2_hash_and_never_returns_it(api, db):
    response = await api.post("/api/register", registration())
    assert PASSWORD.encode() not in response.body
    assert b"password" not in response.body
    stored = await db.collection("users").find_by_id(response.json["id"])
    assert stored["password"].startswith("$argon2id$")
    assert PASSWORD not in stored["password"]
    shown = await api.get(f"{PREFIX}/users/{response.json['id']}", token=response.json["meta"]["token"])
    assert shown.status == 200
    assert "password" not in shown.json["data"]["attributes"]
    assert b"argon2" not in shown.body


async def test_the_registration_token_authenticates_its_user(api):
    user = await api.register("Ann")
    response = await api.post(f"{PREFIX}/posts", {"title": "Mine"}, token=user["token"])
    assert response.status == 201
    assert response.json["data"]["attributes"]["user_id"] == user["id"]


@pytest.mark.parametrize("body, errors", [
    ({}, {"name": "The name field is required.", "email": "The email field is required.",
          "password": "The password field is required."}),
    (registration(name=""), {"name": "The name field is required."}),
    (registration(email="not-an-email"), {"email": "The email must be a valid email address."}),
    (registration(email={"$gt": ""}), {"email": "The email must be a string."}),
    (registration(password="short"), {"password": "The password must be at least 8 characters."}),
    ({**registration(), "password_confirmation": "something-else"},
     {"password": "The password confirmation does not match."}),
    ({k: v for k, v in registration().items() if k != "password_confirmation"},
     {"password": "The password confirmation does not match."}),
    (registration(name="x" * 256), {"name": "The name may not be greater than 255 characters."}),
])
async def test_register_validation_errors_are_422_and_write_nothing(api, db, body, errors):
    response = await api.post("/api/register", body)
    assert response.status == 422
    assert response.json == invalid(**errors)
    await assert_nothing_written(db)


async def test_register_with_a_taken_email_is_422(api, db):
    await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/register", registration(name="Other"))
    assert response.status == 422
    assert response.json == invalid(email="The email has already been taken.")
    assert await count(db, "users") == 1
    assert await count(db, "personal_access_tokens") == 1


class TestConcurrentRegistration:
    """Two registrations with one email at once: the uniqueness check alone loses this race, the index must not."""

    @pytest.fixture
    def config(self, config):
        # A realistic password hash cost keeps both requests between their check and their insert at once,
        # so the loser is refused by the unique index rather than by the validation query.
        return {**config, "auth": {"argon2_time_cost": 2, "argon2_memory_kib": 19456}}

    async def register_twice(self, api):
        await api.register("Warm")  # unique indexes exist before the race starts
        return await asyncio.gather(api.post("/api/register", registration(name="First")),
                                    api.post("/api/register", registration(name="Second")))

    async def test_two_concurrent_registrations_create_exactly_one_user(self, api, db):
        responses = await self.register_twice(api)
        assert sorted(r.status for r in responses) == [201, 422]
        rejected = next(r for r in responses if r.status == 422)
        assert rejected.json == invalid(email="The email has already been taken.")
        assert await count(db, "users", email="ann@example.com") == 1
        assert await count(db, "users") == 2  # the warm-up user and the winner
        assert await count(db, "personal_access_tokens") == 2


class TestServerSetValues:
    """Registration takes the write path every store takes: `value()` fields are set by the server."""

    @pytest.fixture
    def registry(self, app_copy):
        path = app_copy / "repositories" / "users.py"
        declared = 'field("avatar").image().nullable().path("avatars"),'
        path.write_text(path.read_text().replace(
            declared, declared + '\n            field("plan").readonly().value(lambda request: "member"),'))
        return load_app(app_copy)

    async def test_register_stores_and_answers_the_server_set_value_whatever_the_body_says(self, api, db):
        response = await api.post("/api/register", registration(plan="admin"))
        assert response.status == 201, response.body
        assert response.json["attributes"]["plan"] == "member"
        stored = await db.collection("users").find_one(storage.Filter(equals={"email": "ann@example.com"}))
        assert stored["plan"] == "member"


# -- login ----------------------------------------------------------------------------------
async def test_login_answers_200_with_a_new_token(api, db):
    user = await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/login", {"email": "ann@example.com", "password": PASSWORD})
    assert response.status == 200
    body = response.json
    token = body["meta"].pop("token")
    assert body["id"] == user["id"] and body["type"] == "users"
    assert body["meta"] == self_flags()
    assert "password" not in body["attributes"]
    assert token != user["token"]
    assert await count(db, "personal_access_tokens", user_id=user["id"]) == 2
    for each in (token, user["token"]):
        assert (await api.get(f"{PREFIX}/users/{user['id']}", token=each)).status == 200


@pytest.mark.parametrize("email, password", [
    ("ann@example.com", "wrong-password"),
    ("nobody@example.com", PASSWORD),
])
async def test_login_with_bad_credentials_is_401_with_one_message(api, db, email, password):
    await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/login", {"email": email, "password": password})
    assert (response.status, response.json) == (401, BAD_CREDENTIALS)
    assert await count(db, "personal_access_tokens") == 1


@pytest.mark.parametrize("body, errors", [
    ({}, {"email": "The email field is required.", "password": "The password field is required."}),
    ({"email": "ann@example.com"}, {"password": "The password field is required."}),
    ({"email": {"$gt": ""}, "password": PASSWORD}, {"email": "The email must be a string."}),
    ({"email": "ann@example.com", "password": {"$ne": ""}}, {"password": "The password must be a string."}),
])
async def test_login_with_missing_or_non_string_credentials_is_422(api, db, body, errors):
    await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/login", body)
    assert response.status == 422
    assert response.json == invalid(**errors)
    assert await count(db, "personal_access_tokens") == 1


# -- logout -------------------------------------------------------------------------------------
async def test_logout_answers_204_and_the_token_is_refused_afterwards(api, db):
    user = await api.register("Ann")
    other = (await api.post("/api/login", {"email": user["email"], "password": PASSWORD})).json["meta"]["token"]
    response = await api.post("/api/logout", token=user["token"])
    assert (response.status, response.body) == (204, b"")
    assert await db.collection("personal_access_tokens").find_by_id(user["token"].split("|")[0]) is None
    refused = await api.get(f"{PREFIX}/posts", token=user["token"])
    assert (refused.status, refused.json) == (401, UNAUTHENTICATED)
    again = await api.post("/api/logout", token=user["token"])
    assert (again.status, again.json) == (401, UNAUTHENTICATED)
    assert (await api.get(f"{PREFIX}/users/{user['id']}", token=other)).status == 200


async def test_logout_as_a_guest_is_401(api):
    response = await api.post("/api/logout")
    assert (response.status, response.json) == (401, UNAUTHENTICATED)


# -- bearer tokens ---------------------------------------------------------------------------------
@pytest.mark.parametrize("header", [
    "Bearer",
    "Bearer ",
    "Bearer garbage",
    "Bearer |secret",
    "Bearer not-an-id|secret",
    f"Bearer {'0' * 24}|secret",
    f"Bearer {'0' * 24}|",
    "Basic YW5uOnNlY3JldA==",
    "Token abc",
])
async def test_a_malformed_or_unknown_bearer_token_is_401(api, header):
    response = await api.get(f"{PREFIX}/posts", headers={"Authorization": header})
    assert (response.status, response.json) == (401, UNAUTHENTICATED)


async def test_a_token_with_the_wrong_secret_is_401(api):
    user = await api.register("Ann")
    token_id = user["token"].split("|")[0]
    response = await api.get(f"{PREFIX}/posts", token=f"{token_id}|not-the-secret")
    assert (response.status, response.json) == (401, UNAUTHENTICATED)


async def test_a_token_whose_user_was_deleted_is_401(api, db):
    user = await api.register("Ann")
    await db.collection("users").delete(user["id"])
    response = await api.get(f"{PREFIX}/posts", token=user["token"])
    assert (response.status, response.json) == (401, UNAUTHENTICATED)


async def test_without_the_token_guard_guests_read_posts(api):
    response = await api.get(f"{PREFIX}/posts")
    assert response.status == 200
    assert response.json["data"] == []


class TestTokenGuard:
    """`auth:token` in routes.middleware: every repository route requires a user."""

    @pytest.fixture
    def config(self, config):
        return {**config, "routes": {"middleware": ["auth:token"]}}

    @pytest.fixture
    def post(self, api, db, io_loop):
        async def make():
            user = await api.register("Ann")
            response = await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=user["token"])
            return {"user": user, "id": response.json["data"]["id"]}
        return io_loop.run_sync(make)

    @pytest.mark.parametrize("method, path", [
        ("GET", "/posts"), ("GET", "/posts/{id}"), ("POST", "/posts"), ("PUT", "/posts/{id}"),
        ("PATCH", "/posts/{id}"), ("POST", "/posts/{id}"), ("DELETE", "/posts/{id}"),
        ("GET", "/comments"), ("GET", "/tags"), ("GET", "/users"),
    ])
    async def test_guests_get_401_on_every_repository_route(self, api, db, post, method, path):
        before = await db.collection("posts").find_by_id(post["id"])
        body = {"title": "Changed"} if method in ("POST", "PUT", "PATCH") else None
        response = await api.request(method, PREFIX + path.format(id=post["id"]), body)
        assert (response.status, response.json) == (401, UNAUTHENTICATED)
        assert await db.collection("posts").find_by_id(post["id"]) == before
        assert await count(db, "posts") == 1

    async def test_a_user_is_served(self, api, post):
        response = await api.get(f"{PREFIX}/posts/{post['id']}", token=post["user"]["token"])
        assert response.status == 200
        assert response.json["data"]["id"] == post["id"]

    async def test_register_and_login_stay_open(self, api, post):
        registered = await api.post("/api/register", registration(email="bob@example.com"))
        assert registered.status == 201
        logged_in = await api.post("/api/login", {"email": "bob@example.com", "password": PASSWORD})
        assert logged_in.status == 200


# -- identity: one address, one account ---------------------------------------------------------
async def test_register_stores_the_email_trimmed_and_lowercased(api, db):
    response = await api.post("/api/register", registration(email="  Ann@Example.COM "))
    assert response.status == 201
    assert response.json["attributes"]["email"] == "ann@example.com"
    assert (await db.collection("users").find_by_id(response.json["id"]))["email"] == "ann@example.com"


async def test_an_email_in_another_case_is_the_same_account(api, db):
    await api.register("Ann", email="a@example.com")
    response = await api.post("/api/register", registration(name="Other", email="A@EXAMPLE.com"))
    assert response.status == 422
    assert response.json == invalid(email="The email has already been taken.")
    assert await count(db, "users") == 1


async def test_login_finds_the_account_whatever_the_case_and_spaces_of_the_email(api):
    user = await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/login", {"email": " ANN@example.COM", "password": PASSWORD})
    assert response.status == 200
    assert response.json["id"] == user["id"]


@pytest.mark.parametrize("look_alike", ["ａｎｎ@example.com", "ＡＮＮ＠ｅｘａｍｐｌｅ．ｃｏｍ", " ａnn@example.com"])
async def test_a_fullwidth_look_alike_email_is_the_same_account(api, db, look_alike):
    """NFKC before lowercasing: compatibility forms are the letters they look like, so no second account."""
    user = await api.register("Ann", email="ann@example.com")
    response = await api.post("/api/register", registration(name="Other", email=look_alike))
    assert response.status == 422
    assert response.json == invalid(email="The email has already been taken.")
    assert await count(db, "users") == 1
    for email in (look_alike, "ann@example.com"):
        logged_in = await api.post("/api/login", {"email": email, "password": PASSWORD})
        assert (logged_in.status, logged_in.json["id"]) == (200, user["id"])


async def test_a_fullwidth_email_is_stored_in_its_plain_form_and_found_by_the_token_commands(api, db, restify):
    response = await api.post("/api/register", registration(email="ｂｏｂ＠Ｅｘａｍｐｌｅ．ｃｏｍ"))
    assert response.status == 201
    assert response.json["attributes"]["email"] == "bob@example.com"
    logged_in = await api.post("/api/login", {"email": "bob@example.com", "password": PASSWORD})
    assert (logged_in.status, logged_in.json["id"]) == (200, response.json["id"])
    assert await auth.user_id_for_email(restify, "ＢＯＢ@example.com") == response.json["id"]  # token:create, :revoke


async def test_a_profile_email_in_another_case_of_a_taken_one_is_422(api):
    await api.register("Ann", email="ann@example.com")
    bob = await api.register("Bob", email="bob@example.com")
    response = await api.put(f"{PREFIX}/profile", {"name": "Bob", "email": "ANN@example.com",
                                                   "current_password": PASSWORD}, token=bob["token"])
    assert response.status == 422
    assert response.json == invalid(email="The email has already been taken.")


@pytest.mark.parametrize("email", ["ann\x00@example.com", "ann@exam\x07ple.com", "ann@example.com\x7f",
                                   "an\u0085n@example.com", "an\u200bn@example.com", "ann\u202e@example.com"])
async def test_the_email_rule_refuses_control_characters(api, db, email):
    response = await api.post("/api/register", registration(email=email))
    assert response.status == 422
    assert response.json == invalid(email="The email must be a valid email address.")
    await assert_nothing_written(db)
