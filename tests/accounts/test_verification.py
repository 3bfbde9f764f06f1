"""Email verification: the signed link mailed on registration and on a change of address, resending
it, forged and expired links, and `auth.require_verified` on REST (GraphQL and MCP: their own tests)."""
import re
import time
from urllib.parse import urlsplit

import pytest

from service.core.identity.verification import _signature, email_hash, verification_path
from service.mail import deliver

VERIFY = {"auth": {"verify_email": True}}
REQUIRED = {"auth": {"verify_email": True, "require_verified": True}}
POSTS, PROFILE = "/api/restify/posts", "/api/restify/profile"
NOT_VERIFIED = {"message": "Your email address is not verified.", "code": "EMAIL_NOT_VERIFIED"}
INVALID_LINK = {"message": "This verification link is invalid."}


async def mailed_link(restify, smtp) -> str:
    """The path and query of the verification link in the last mail received."""
    await deliver(restify.settings, restify.db)
    message = smtp.inbox.messages[-1]
    assert message["Subject"] == "Confirm your email address"
    link = re.search(r"http://\S+/api/verify-email/\S+", message.get_body(("plain",)).get_content()).group(0)
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


async def stored_user(restify, id: str) -> dict:
    return await restify.db.collection("users").find_by_id(id)


@pytest.mark.parametrize("config", [VERIFY], indirect=True)
async def test_registration_mails_a_link_that_verifies_the_address(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    assert smtp.inbox.messages == []  # queued, not sent in the request
    link = await mailed_link(restify, smtp)
    assert smtp.inbox.messages[0]["To"] == ann["email"]
    assert (await stored_user(restify, ann["id"])).get("email_verified_at") is None
    response = await api.get(link)
    assert (response.status, response.json) == (200, {"message": "Your email address is verified.", "verified": True})
    verified_at = (await stored_user(restify, ann["id"]))["email_verified_at"]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", verified_at)
    assert (await api.get(link)).status == 200  # opened twice: still verified, at the first time
    assert (await stored_user(restify, ann["id"]))["email_verified_at"] == verified_at


async def test_without_verify_email_registration_sends_nothing(api, restify, smtp):
    smtp.start()
    await api.register("Ann")
    assert await restify.db.outbox().waiting() == []


@pytest.mark.parametrize("config", [VERIFY], indirect=True)
async def test_forged_and_altered_links_are_refused(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    bob = await api.register("Bob")
    link = await mailed_link(restify, smtp)  # Bob's
    path, query = link.split("?")
    expires = re.search(r"expires=(\d+)", query).group(1)
    signature = re.search(r"signature=(\w+)", query).group(1)
    forged = [
        f"{path}?expires={expires}&signature={'0' * 64}",
        f"{path}?expires={int(expires) + 3600}&signature={signature}",
        f"{path}?expires={expires}",
        path,
        link.replace(bob["id"], ann["id"]),
        f"{path.rsplit('/', 1)[0]}/{email_hash(ann['email'])}?{query}",
        f"{path}?expires=soon&signature=x",
    ]
    for url in forged:
        response = await api.get(url)
        assert (response.status, response.json) == (403, INVALID_LINK), url
    assert (await stored_user(restify, bob["id"])).get("email_verified_at") is None


@pytest.mark.parametrize("config", [VERIFY], indirect=True)
async def test_an_expired_link_is_refused(api, restify, smtp):
    ann = await api.register("Ann")
    path = verification_path(restify, ann["id"], ann["email"])
    expires = str(int(time.time()) - 1)
    response = await api.get(f"{path}?expires={expires}&signature={_signature(restify, path, expires)}")
    assert (response.status, response.json) == (403, {"message": "This verification link has expired; ask for a "
                                                                 "new one."})
    assert (await stored_user(restify, ann["id"])).get("email_verified_at") is None


@pytest.mark.parametrize("config", [VERIFY], indirect=True)
async def test_a_new_address_must_be_verified_again_and_the_old_link_stops_working(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    old_link = await mailed_link(restify, smtp)
    assert (await api.get(old_link)).status == 200
    second_link_mail = len(smtp.inbox.messages)
    await api.register("Cid")  # another user's mail in between
    response = await api.put(PROFILE, {"name": "Ann", "email": "ann.new@example.com", "current_password": "secret-pass"},
                             token=ann["token"])
    assert response.status == 200, response.body
    assert (await stored_user(restify, ann["id"]))["email_verified_at"] is None
    await deliver(restify.settings, restify.db)
    assert [m["To"] for m in smtp.inbox.messages[second_link_mail:]][-1] == "ann.new@example.com"
    assert (await api.get(old_link)).status == 403  # it names the old address
    new_link = await mailed_link(restify, smtp)
    assert (await api.get(new_link)).status == 200


@pytest.mark.parametrize("config", [{"auth": {**VERIFY["auth"], "resends_per_account": 2}}], indirect=True)
async def test_resend_needs_a_login_and_is_throttled(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    assert (await api.post("/api/verify-email/resend")).status == 401
    statuses = [(await api.post("/api/verify-email/resend", token=ann["token"])).status for _ in range(3)]
    assert statuses == [202, 202, 429]
    await deliver(restify.settings, restify.db)
    assert len(smtp.inbox.messages) == 3  # the registration's and two more
    assert (await api.get(await mailed_link(restify, smtp))).status == 200  # any of them works
    response = await api.post("/api/verify-email/resend", token=ann["token"])
    assert (response.status, response.json) == (202, {"message": "Your email address is already verified.",
                                                      "verified": True})


@pytest.mark.parametrize("config", [REQUIRED], indirect=True)
async def test_require_verified_refuses_writes_until_verified(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    response = await api.post(POSTS, {"title": "Hello"}, token=ann["token"])
    assert (response.status, response.json) == (403, NOT_VERIFIED)
    assert (await api.get(POSTS, token=ann["token"])).status == 200  # reads are allowed
    assert (await api.get(PROFILE, token=ann["token"])).status == 200
    assert (await api.get(await mailed_link(restify, smtp))).status == 200
    assert (await api.post(POSTS, {"title": "Hello"}, token=ann["token"])).status == 201
