"""GET/PUT/POST /api/restify/profile: the logged-in user, unwrapped."""
import pytest

from storage import Filter

from tests.images import multipart, png

PROFILE = "/api/restify/profile"
FLAGS = {"authorizedToShow": True, "authorizedToStore": False, "authorizedToUpdate": True, "authorizedToDelete": True,
         "version": 1}


async def test_profile_is_the_user_unwrapped_with_meta(api):
    user = await api.register("Ann")
    response = await api.get(PROFILE, token=user["token"])
    assert response.status == 200
    body = response.json
    assert set(body) == {"id", "type", "attributes", "meta"}
    assert body["id"] == user["id"] and body["type"] == "users"
    assert set(body["attributes"]) == {"name", "email", "bio", "avatar", "post_count", "created_at", "updated_at"}
    assert body["attributes"]["email"] == user["email"]
    assert body["meta"] == FLAGS


async def test_profile_include_loads_declared_relations(api, db):
    user = await api.register("Ann")
    for title in ("one", "two"):
        await api.post("/api/restify/posts", {"title": title}, token=user["token"])
    body = (await api.get(f"{PROFILE}?include=posts", token=user["token"])).json
    assert [p["attributes"]["title"] for p in body["relationships"]["posts"]] == ["one", "two"]
    assert (await api.get(f"{PROFILE}?related=posts", token=user["token"])).json["relationships"]["posts"]


async def test_profile_include_of_unknown_relation_is_400_naming_it(api):
    user = await api.register("Ann")
    response = await api.get(f"{PROFILE}?include=posts,friends", token=user["token"])
    assert response.status == 400
    assert response.json["message"] == "Unknown relations: friends (the relations of users: posts)."


@pytest.mark.parametrize("method", ["GET", "PUT", "POST"])
async def test_profile_without_token_is_401(api, method):
    response = await api.request(method, PROFILE)
    assert response.status == 401
    assert response.json == {"message": "Unauthenticated."}


async def test_put_profile_updates_declared_fields_only(api, db):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"name": "Annie", "email": user["email"], "bio": "hi", "is_admin": True},
                             token=user["token"])
    assert response.status == 200
    assert response.json["attributes"]["name"] == "Annie"
    assert response.json["attributes"]["bio"] == "hi"
    stored = await db.collection("users").find_by_id(user["id"])
    assert stored["name"] == "Annie" and "is_admin" not in stored


async def test_put_profile_with_empty_payload_reports_required_fields(api):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {}, token=user["token"])
    assert response.status == 422
    assert response.json == {"message": "The given data was invalid.",
                             "errors": {"name": ["The name field is required."],
                                        "email": ["The email field is required."]}}


async def test_put_profile_hashes_a_new_password(api, db):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"name": "Ann", "email": user["email"], "password": "another-pass",
                                       "password_confirmation": "another-pass", "current_password": "secret-pass"},
                             token=user["token"])
    assert response.status == 200
    assert "password" not in response.json["attributes"]
    stored = await db.collection("users").find_by_id(user["id"])
    assert stored["password"].startswith("$argon2")
    login = await api.post("/api/login", {"email": user["email"], "password": "another-pass"})
    assert login.status == 200


async def test_put_profile_ignores_files(api, db):
    user = await api.register("Ann")
    body, headers = multipart({"name": "Ann", "email": user["email"]}, {"avatar": ("a.png", png(), "image/png")})
    response = await api.put(PROFILE, body=body, headers=headers, token=user["token"])
    assert response.status == 400
    assert response.json == {"message": "This route takes a JSON body; send files with POST as multipart/form-data."}
    assert (await db.collection("users").find_by_id(user["id"])).get("avatar") is None


async def test_post_profile_multipart_stores_avatar(api, db):
    user = await api.register("Ann")
    body, headers = multipart({"name": "Ann", "email": user["email"]}, {"avatar": ("me.png", png(), "image/png")})
    response = await api.post(PROFILE, body=body, headers=headers, token=user["token"])
    assert response.status == 200, response.body
    avatar = response.json["attributes"]["avatar"]
    assert avatar.startswith("/storage/avatars/") and avatar.endswith(".png")
    served = await api.get(avatar)
    assert served.status == 200 and served.body == png()
    assert served.headers["Content-Type"] == "image/png"


@pytest.fixture
def no_profile(registry):
    users = registry.get("users")
    cls = type(users.repository)
    original = cls.__dict__.get("can_use_for_profile")
    cls.can_use_for_profile = classmethod(lambda c, request: False)
    yield
    cls.can_use_for_profile = original


async def test_profile_falls_back_to_minimal_safe_user(api, no_profile):
    user = await api.register("Ann")
    body = (await api.get(PROFILE, token=user["token"])).json
    assert body == {"id": user["id"], "type": "users",
                    "attributes": {"name": "Ann", "email": user["email"],
                                   "created_at": body["attributes"]["created_at"],
                                   "updated_at": body["attributes"]["updated_at"]}}
    updated = await api.put(PROFILE, {"name": "Anna", "password": "x"}, token=user["token"])
    assert updated.status == 200 and updated.json["attributes"]["name"] == "Anna"


# -- identity: current_password, token revocation ---------------------------------------------
PASSWORD = "secret-pass"
INVALID = "The given data was invalid."
CURRENT_REQUIRED = {"message": INVALID, "errors": {"current_password": ["The current password field is required."]}}
CURRENT_WRONG = {"message": INVALID, "errors": {"current_password": ["The password is incorrect."]}}


def new_password(**extra) -> dict:
    return {"password": "another-pass", "password_confirmation": "another-pass", **extra}


async def login(api, email: str, password: str = PASSWORD):
    return await api.post("/api/login", {"email": email, "password": password})


@pytest.mark.parametrize("extra, answer", [({}, CURRENT_REQUIRED), ({"current_password": ""}, CURRENT_REQUIRED),
                                           ({"current_password": 12345678}, CURRENT_REQUIRED),
                                           ({"current_password": "wrong-pass"}, CURRENT_WRONG)])
async def test_a_password_change_without_the_right_current_password_is_422_and_changes_nothing(api, db, extra,
                                                                                              answer):
    user = await api.register("Ann")
    before = await db.collection("users").find_by_id(user["id"])
    response = await api.put(PROFILE, {"name": "Ann", "email": user["email"], **new_password(**extra)},
                             token=user["token"])
    assert (response.status, response.json) == (422, answer)
    assert await db.collection("users").find_by_id(user["id"]) == before
    assert (await login(api, user["email"])).status == 200


@pytest.mark.parametrize("extra, answer", [({}, CURRENT_REQUIRED), ({"current_password": "wrong-pass"}, CURRENT_WRONG)])
async def test_an_email_change_without_the_right_current_password_is_422_and_changes_nothing(api, db, extra, answer):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"name": "Ann", "email": "new@example.com", **extra}, token=user["token"])
    assert (response.status, response.json) == (422, answer)
    assert (await db.collection("users").find_by_id(user["id"]))["email"] == user["email"]


async def test_an_email_change_with_the_current_password_is_stored(api, db):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"name": "Ann", "email": "new@example.com", "current_password": PASSWORD},
                             token=user["token"])
    assert response.status == 200
    assert response.json["attributes"]["email"] == "new@example.com"
    assert (await login(api, "new@example.com")).status == 200


async def test_keeping_the_same_email_needs_no_current_password(api):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"name": "Annie", "email": user["email"].upper()}, token=user["token"])
    assert response.status == 200
    assert response.json["attributes"] == {**response.json["attributes"], "name": "Annie", "email": user["email"]}


async def test_the_fallback_profile_asks_the_current_password_for_an_email_change(api, no_profile):
    user = await api.register("Ann")
    response = await api.put(PROFILE, {"email": "new@example.com"}, token=user["token"])
    assert (response.status, response.json) == (422, CURRENT_REQUIRED)


async def test_a_password_change_revokes_every_other_token_and_keeps_the_one_used(api, db):
    user = await api.register("Ann")
    others = [(await login(api, user["email"])).json["meta"]["token"] for _ in range(2)]
    response = await api.put(PROFILE, {"name": "Ann", "email": user["email"], **new_password(current_password=PASSWORD)},
                             token=user["token"])
    assert response.status == 200
    assert (await api.get(PROFILE, token=user["token"])).status == 200
    for token in others:
        refused = await api.get(PROFILE, token=token)
        assert (refused.status, refused.json) == (401, {"message": "Unauthenticated."})
    assert [t["id"] for t in await db.collection("personal_access_tokens").find(Filter())] == [
        user["token"].split("|")[0]]
    assert (await login(api, user["email"])).status == 401
    assert (await login(api, user["email"], "another-pass")).status == 200


async def test_a_profile_change_without_a_new_password_keeps_every_token(api):
    user = await api.register("Ann")
    other = (await login(api, user["email"])).json["meta"]["token"]
    response = await api.put(PROFILE, {"name": "Annie", "email": user["email"]}, token=user["token"])
    assert response.status == 200
    assert (await api.get(PROFILE, token=other)).status == 200


async def test_the_users_route_asks_the_current_password_and_revokes_other_tokens_too(api):
    user = await api.register("Ann")
    other = (await login(api, user["email"])).json["meta"]["token"]
    path = f"/api/restify/users/{user['id']}"
    refused = await api.patch(path, new_password(), token=user["token"])
    assert (refused.status, refused.json) == (422, CURRENT_REQUIRED)
    assert (await api.patch(path, new_password(current_password=PASSWORD), token=user["token"])).status == 200
    assert (await api.get(PROFILE, token=other)).status == 401
    assert (await api.get(PROFILE, token=user["token"])).status == 200


async def test_deleting_a_user_deletes_their_tokens(api, db):
    user = await api.register("Ann")
    bob = await api.register("Bob")
    await login(api, user["email"])
    response = await api.delete(f"/api/restify/users/{user['id']}", token=user["token"])
    assert response.status == 204
    assert await db.collection("personal_access_tokens").count(Filter(equals={"user_id": user["id"]})) == 0
    assert await db.collection("personal_access_tokens").count(Filter(equals={"user_id": bob["id"]})) == 1


class TestCurrentPasswordGuesses:
    @pytest.fixture
    def config(self, config):
        config["auth"].update({"login_attempts_per_account": 3})
        return config

    async def test_wrong_current_passwords_count_as_login_attempts_of_the_account(self, api):
        user = await api.register("Ann")
        guess = {"name": "Ann", "email": user["email"], **new_password(current_password="wrong-pass")}
        for _ in range(3):
            assert (await api.put(PROFILE, guess, token=user["token"])).json == CURRENT_WRONG
        refused = await api.put(PROFILE, {**guess, "current_password": PASSWORD}, token=user["token"])
        assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
        assert (await login(api, user["email"])).status == 429
