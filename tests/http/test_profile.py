"""GET/PUT/POST /api/restify/profile: the logged-in user, unwrapped."""
import pytest

from tests.images import multipart, png

PROFILE = "/api/restify/profile"
FLAGS = {"authorizedToShow": True, "authorizedToStore": False, "authorizedToUpdate": True, "authorizedToDelete": True}


async def test_profile_is_the_user_unwrapped_with_meta(api):
    user = await api.register("Ann")
    response = await api.get(PROFILE, token=user["token"])
    assert response.status == 200
    body = response.json
    assert set(body) == {"id", "type", "attributes", "meta"}
    assert body["id"] == user["id"] and body["type"] == "users"
    assert set(body["attributes"]) == {"name", "email", "bio", "avatar", "created_at", "updated_at"}
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
    assert response.json["message"] == "Unknown relations: friends."


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
                                       "password_confirmation": "another-pass"}, token=user["token"])
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
