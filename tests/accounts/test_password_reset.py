"""Password resets over real HTTP, with the mail read from a real SMTP server."""
import re
from urllib.parse import parse_qs, urlsplit

import pytest

import storage
from service.core.operations.accounts import BAD_TOKEN, RESET_SENT
from service.mail import deliver

PROFILE = "/api/restify/profile"
PASSWORD, NEW = "secret-pass", "brand-new-pass"
INVALID = "The given data was invalid."


def reset_body(email: str, token: str, password: str = NEW, confirmation: str | None = None) -> dict:
    return {"email": email, "token": token, "password": password,
            "password_confirmation": password if confirmation is None else confirmation}


def link_token(message) -> tuple[str, str]:
    """The link of a reset mail and the token it carries."""
    text = message.get_body(("plain",)).get_content()
    link = re.search(r"http://\S+/api/reset-password\?\S+", text).group(0)
    return link, parse_qs(urlsplit(link).query)["token"][0]


async def ask_reset(api, restify, smtp, email: str) -> str:
    response = await api.post("/api/forgot-password", {"email": email})
    assert (response.status, response.json) == (202, {"message": RESET_SENT})
    await deliver(restify.settings, restify.db)
    return link_token(smtp.inbox.messages[-1])[1]


async def test_a_mailed_reset_sets_the_password_and_refuses_every_old_token(api, restify, smtp, ann):
    smtp.start()
    second = (await api.post("/api/login", {"email": ann["email"], "password": PASSWORD})).json["meta"]["token"]
    response = await api.post("/api/forgot-password", {"email": ann["email"]})
    assert (response.status, response.json) == (202, {"message": RESET_SENT})
    assert await deliver(restify.settings, restify.db) == 1
    (message,) = smtp.inbox.messages
    assert (message["To"], message["Subject"]) == (ann["email"], "Reset your password")
    link, token = link_token(message)
    assert token in message.get_body(("html",)).get_content()
    assert await restify.db.collection("password_reset_tokens").count(storage.Filter(equals={"token_hash": token})) \
        == 0  # stored hashed

    response = await api.post("/api/reset-password", reset_body(ann["email"], token))
    assert (response.status, response.json) == (200, {"message": "Your password has been reset."})
    for old in (ann["token"], second):
        assert (await api.get(PROFILE, token=old)).status == 401
    assert (await api.post("/api/login", {"email": ann["email"], "password": PASSWORD})).status == 401
    login = await api.post("/api/login", {"email": ann["email"], "password": NEW})
    assert login.status == 200
    assert (await api.get(PROFILE, token=login.json["meta"]["token"])).status == 200
    assert await restify.db.outbox().waiting() == []  # sent, so no longer in the outbox

    again = await api.post("/api/reset-password", reset_body(ann["email"], token, "third-pass-1"))
    assert (again.status, again.json) == (422, {"message": INVALID, "errors": {"token": [BAD_TOKEN]}})


async def test_an_unknown_address_answers_alike_and_sends_nothing(api, restify, smtp, ann):
    smtp.start()
    response = await api.post("/api/forgot-password", {"email": "nobody@example.com"})
    assert (response.status, response.json) == (202, {"message": RESET_SENT})
    assert await restify.db.outbox().waiting() == []
    assert await deliver(restify.settings, restify.db) == 0 and smtp.inbox.messages == []


async def test_the_address_is_found_in_any_case(api, restify, smtp, ann):
    smtp.start()
    await ask_reset(api, restify, smtp, ann["email"].upper())
    assert smtp.inbox.messages[0]["To"] == ann["email"]


@pytest.mark.parametrize("token", ["wrong", "", None, 5])
async def test_a_wrong_token_is_422_and_changes_nothing(api, restify, smtp, ann, token):
    smtp.start()
    real = await ask_reset(api, restify, smtp, ann["email"])
    response = await api.post("/api/reset-password", reset_body(ann["email"], token))
    errors = response.json["errors"]
    assert response.status == 422
    assert errors == {"token": [BAD_TOKEN if token == "wrong" else
                                "The token field is required." if token in ("", None) else "The token must be a string."]}
    assert (await api.get(PROFILE, token=ann["token"])).status == 200
    assert (await api.post("/api/reset-password", reset_body(ann["email"], real))).status == 200  # still usable


async def test_a_token_is_for_its_own_account_only(api, restify, smtp, ann, bob):
    smtp.start()
    token = await ask_reset(api, restify, smtp, ann["email"])
    response = await api.post("/api/reset-password", reset_body(bob["email"], token))
    assert (response.status, response.json["errors"]) == (422, {"token": [BAD_TOKEN]})


async def test_only_the_latest_token_works(api, restify, smtp, ann):
    smtp.start()
    first = await ask_reset(api, restify, smtp, ann["email"])
    second = await ask_reset(api, restify, smtp, ann["email"])
    assert (await api.post("/api/reset-password", reset_body(ann["email"], first))).status == 422
    assert (await api.post("/api/reset-password", reset_body(ann["email"], second))).status == 200


@pytest.mark.parametrize("config", [{"auth": {"reset_ttl": 1}}], indirect=True)
async def test_an_expired_token_is_422(api, restify, smtp, ann):
    smtp.start()
    token = await ask_reset(api, restify, smtp, ann["email"])
    resets = restify.db.collection("password_reset_tokens")
    (stored,) = await resets.find(storage.Filter())
    await resets.update(stored["id"], {"expires_at": "2000-01-01T00:00:00.000Z"})
    response = await api.post("/api/reset-password", reset_body(ann["email"], token))
    assert (response.status, response.json["errors"]) == (422, {"token": [BAD_TOKEN]})


async def test_the_repository_password_rules_apply_and_keep_the_token(api, restify, smtp, ann):
    smtp.start()
    token = await ask_reset(api, restify, smtp, ann["email"])
    short = await api.post("/api/reset-password", reset_body(ann["email"], token, "short"))
    assert (short.status, short.json["errors"]) == (422, {"password": ["The password must be at least 8 characters."]})
    mismatch = await api.post("/api/reset-password", reset_body(ann["email"], token, NEW, "other-pass-1"))
    assert (mismatch.status, list(mismatch.json["errors"])) == (422, ["password"])
    assert (await api.post("/api/reset-password", reset_body(ann["email"], token))).status == 200


@pytest.mark.parametrize("body", ['{"email": ', "[]", '"text"', '{"email": ["a@b.c"]}', "{}"])
async def test_malformed_bodies_are_4xx(api, restify, body, ann):
    for path in ("/api/forgot-password", "/api/reset-password"):
        response = await api.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        assert response.status in (400, 422) and "message" in response.json
    assert await restify.db.outbox().waiting() == []


@pytest.mark.parametrize("config", [{"auth": {"resets_per_account": 2, "resets_per_address": 4}}], indirect=True)
async def test_a_flood_of_resets_is_429(api, restify, smtp, ann):
    statuses = [(await api.post("/api/forgot-password", {"email": ann["email"]})).status for _ in range(3)]
    assert statuses == [202, 202, 429]
    others = [(await api.post("/api/forgot-password", {"email": f"x{i}@example.com"})).status for i in range(2)]
    assert others == [202, 429]  # the client's own limit: 4 in all, whatever the email, refused ones too
    assert len(await restify.db.outbox().waiting()) == 2


@pytest.mark.parametrize("password", [None, "", 12345678, ["brand-new-pass"], {"a": 1}])
async def test_a_missing_or_malformed_password_is_422_and_keeps_the_token(api, restify, smtp, ann, password):
    smtp.start()
    token = await ask_reset(api, restify, smtp, ann["email"])
    response = await api.post("/api/reset-password", {"email": ann["email"], "token": token, "password": password,
                                                      "password_confirmation": password})
    assert (response.status, list(response.json["errors"])) == (422, ["password"])
    assert (await api.post("/api/reset-password", reset_body(ann["email"], token))).status == 200
