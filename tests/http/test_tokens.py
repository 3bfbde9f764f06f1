"""Tokens as a resource over REST: `GET/POST /api/tokens`, `DELETE /api/tokens/<id>`, logout of every
token, the abilities a new token may carry, and `last_used_at`."""
import hashlib
import re

import pytest

import storage

TOKENS = "/api/tokens"
PREFIX = "/api/restify"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UNAUTHENTICATED = {"message": "Unauthenticated."}
LISTED = {"id", "name", "abilities", "created_at", "last_used_at", "expires_at", "current"}


@pytest.fixture
def config(config, request):
    """The conftest settings; parametrized indirectly, with these `auth` settings too."""
    config["auth"] = {**config["auth"], **getattr(request, "param", {})}
    return config


def invalid(**errors: str) -> dict:
    return {"message": "The given data was invalid.", "errors": {name: [message] for name, message in errors.items()}}


def missing(ability: str) -> dict:
    return {"message": f'This token lacks the ability "{ability}".', "code": "MISSING_ABILITY", "ability": ability}


async def create(api, token: str, **body) -> dict:
    response = await api.post(TOKENS, {"name": "script", **body}, token=token)
    assert response.status == 201, response.body
    return response.json


async def listed(api, token: str) -> list[dict]:
    response = await api.get(TOKENS, token=token)
    assert response.status == 200, response.body
    return response.json["data"]


async def test_a_new_token_is_listed_with_its_abilities_and_its_secret_is_shown_once(api, db, ann):
    body = await create(api, ann["token"], name="reader", abilities=["posts:read", "comments:read"],
                        expires_in=3600)
    secret = body["meta"]["token"]
    token_id, _, plain = secret.partition("|")
    assert body["data"] == {"id": token_id, "name": "reader", "abilities": ["posts:read", "comments:read"],
                            "created_at": body["data"]["created_at"], "last_used_at": None,
                            "expires_at": body["data"]["expires_at"], "current": False}
    assert ISO.match(body["data"]["created_at"]) and ISO.match(body["data"]["expires_at"])
    everything = await listed(api, ann["token"])
    assert [(t["name"], t["abilities"], t["current"]) for t in everything] == [
        ("api", ["*"], True), ("reader", ["posts:read", "comments:read"], False)]
    assert all(set(t) == LISTED for t in everything)
    response = await api.get(TOKENS, token=ann["token"])
    assert plain.encode() not in response.body
    assert hashlib.sha256(plain.encode()).hexdigest().encode() not in response.body
    stored = await db.collection("personal_access_tokens").find_by_id(token_id)
    assert stored["token_hash"] == hashlib.sha256(plain.encode()).hexdigest() and plain not in str(stored)
    assert (await api.get(f"{PREFIX}/posts", token=secret)).status == 200


async def test_a_user_sees_only_their_own_tokens(api, ann, bob):
    await create(api, bob["token"], name="bobs")
    assert [t["name"] for t in await listed(api, ann["token"])] == ["api"]


async def test_a_token_may_be_revoked_by_its_owner_only(api, ann, bob):
    secret = (await create(api, ann["token"]))["meta"]["token"]
    token_id = secret.partition("|")[0]
    assert (await api.delete(f"{TOKENS}/{token_id}", token=bob["token"])).status == 404
    assert (await api.get(f"{PREFIX}/posts", token=secret)).status == 200
    assert (await api.delete(f"{TOKENS}/{token_id}", token=ann["token"])).status == 204
    assert (await api.get(f"{PREFIX}/posts", token=secret)).json == UNAUTHENTICATED
    assert (await api.delete(f"{TOKENS}/{token_id}", token=ann["token"])).status == 404
    assert (await api.delete(f"{TOKENS}/not-an-id", token=ann["token"])).json == {"message": "Not found."}


async def test_the_tokens_routes_need_a_token(api):
    for response in (await api.get(TOKENS), await api.post(TOKENS, {"name": "x"}),
                     await api.delete(f"{TOKENS}/{'0' * 24}")):
        assert (response.status, response.json) == (401, UNAUTHENTICATED)


async def test_logout_all_revokes_every_token_of_the_user_and_no_one_elses(api, db, ann, bob):
    other = (await create(api, ann["token"]))["meta"]["token"]
    assert (await api.post("/api/logout", {"all": True}, token=other)).status == 204
    for token in (ann["token"], other):
        assert (await api.get(TOKENS, token=token)).status == 401
    assert await db.collection("personal_access_tokens").count(storage.Filter(equals={"user_id": ann["id"]})) == 0
    assert (await api.get(TOKENS, token=bob["token"])).status == 200


async def test_logout_without_all_revokes_only_the_token_it_carries(api, ann):
    other = (await create(api, ann["token"]))["meta"]["token"]
    assert (await api.post("/api/logout", {"all": False}, token=other)).status == 204
    assert (await api.get(TOKENS, token=ann["token"])).status == 200
    assert (await api.post("/api/logout", {"all": "yes"}, token=ann["token"])).json == invalid(
        all="The all field must be true or false.")


@pytest.mark.parametrize("abilities, message", [
    (["nothings:read"], 'The ability "nothings:read" names no repository.'),
    (["posts:frobnicate"], 'The ability "posts:frobnicate" is not read, write or an action of posts.'),
    (["posts"], 'The ability "posts" is not "*" or "<repository>:<read, write or an action>".'),
    ([], "The abilities must be a non-empty list of strings."),
    ("posts:read", "The abilities must be a non-empty list of strings."),
    ([1], "The abilities must be a non-empty list of strings."),
])
async def test_abilities_naming_unknown_repositories_or_actions_are_refused(api, db, ann, abilities, message):
    response = await api.post(TOKENS, {"name": "x", "abilities": abilities}, token=ann["token"])
    assert (response.status, response.json) == (422, invalid(abilities=message))
    assert len(await listed(api, ann["token"])) == 1  # nothing was stored


async def test_the_name_and_the_lifetime_are_validated_with_the_abilities(api, ann):
    response = await api.post(TOKENS, {"abilities": ["posts:nope"], "expires_in": 0}, token=ann["token"])
    assert response.status == 422
    assert response.json["errors"] == {
        "name": ["The name field is required."], "expires_in": ["The expires in must be at least 1."],
        "abilities": ['The ability "posts:nope" is not read, write or an action of posts.']}


async def test_an_action_key_read_and_write_are_abilities(api, ann):
    body = await create(api, ann["token"], abilities=["*", "posts:publish-posts", "tags:write", "users:read"])
    assert body["data"]["abilities"] == ["*", "posts:publish-posts", "tags:write", "users:read"]


async def test_a_token_cannot_make_one_that_may_do_more_than_itself(api, ann):
    reader = (await create(api, ann["token"], abilities=["posts:read"]))["meta"]["token"]
    response = await api.post(TOKENS, {"name": "wider", "abilities": ["*"]}, token=reader)
    assert (response.status, response.json) == (403, missing("*"))
    response = await api.post(TOKENS, {"name": "wider", "abilities": ["posts:read", "posts:write"]}, token=reader)
    assert (response.status, response.json) == (403, missing("posts:write"))
    narrower = await create(api, reader, name="same")  # by default: the abilities of the token that asks
    assert narrower["data"]["abilities"] == ["posts:read"]
    writer = (await create(api, ann["token"], abilities=["posts:write"]))["meta"]["token"]
    assert (await create(api, writer, abilities=["posts:read", "posts:publish-posts"]))["data"]["abilities"] == [
        "posts:read", "posts:publish-posts"]  # write covers the repository's read and its actions


@pytest.mark.parametrize("config", [{"login_abilities": ["posts:read"]}], indirect=True)
async def test_login_and_register_give_the_configured_abilities(api, ann):
    assert [t["abilities"] for t in await listed(api, ann["token"])] == [["posts:read"]]
    response = await api.post("/api/login", {"email": ann["email"], "password": "secret-pass"})
    assert [t["abilities"] for t in await listed(api, response.json["meta"]["token"])] == [["posts:read"]] * 2
    assert (await api.post(f"{PREFIX}/posts", {"title": "t"}, token=ann["token"])).json == missing("posts:write")


async def test_last_used_is_written_at_most_once_a_minute(api, db, ann):
    assert (await listed(api, ann["token"]))[0]["last_used_at"] is not None  # the listing request used it
    first = (await listed(api, ann["token"]))[0]["last_used_at"]
    assert (await listed(api, ann["token"]))[0]["last_used_at"] == first  # within the minute: not written again
    token_id = ann["token"].partition("|")[0]
    await db.collection("personal_access_tokens").update(token_id, {"last_used_at": "2000-01-01T00:00:00.000Z"})
    assert (await listed(api, ann["token"]))[0]["last_used_at"] > "2000-01-01T00:00:00.000Z"
