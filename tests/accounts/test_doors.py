"""The same accounts on GraphQL (forgotPassword, resetPassword, resendVerification) and `require_verified`
on GraphQL and MCP: one operation layer, so the same answers and refusals as REST."""
import re

import pytest

from service.mail import deliver
from tests.accounts.test_verification import NOT_VERIFIED, REQUIRED, mailed_link
from tests.mcp.conftest import connect, error, mcp_endpoint, mcp_url, ok  # noqa: F401 (fixtures)

CREATE = 'mutation { createPost(input: {title: "Hello"}) { title } }'


async def graphql(api, query: str, variables: dict | None = None, token: str | None = None) -> dict:
    response = await api.post("/graphql", {"query": query, "variables": variables or {}}, token=token)
    assert response.status == 200, response.body
    return response.json


async def test_graphql_forgot_and_reset_password(api, restify, smtp, ann):
    smtp.start()
    forgot = "mutation ($email: String!) { forgotPassword(email: $email) }"
    assert await graphql(api, forgot, {"email": ann["email"]}) == {"data": {"forgotPassword": True}}
    assert await graphql(api, forgot, {"email": "nobody@example.com"}) == {"data": {"forgotPassword": True}}
    await deliver(restify.settings, restify.db)
    (message,) = smtp.inbox.messages
    token = re.search(r"token=([\w-]+)", message.get_body(("plain",)).get_content()).group(1)
    reset = ("mutation ($email: String!, $token: String!, $password: String!) { resetPassword(email: $email, "
             "token: $token, password: $password, passwordConfirmation: $password) }")
    wrong = await graphql(api, reset, {"email": ann["email"], "token": "nope", "password": "brand-new-pass"})
    assert wrong["errors"][0]["extensions"] == {
        "code": "VALIDATION_FAILED", "errors": {"token": ["This password reset token is invalid or has expired."]}}
    done = await graphql(api, reset, {"email": ann["email"], "token": token, "password": "brand-new-pass"})
    assert done == {"data": {"resetPassword": True}}
    assert (await api.get("/api/restify/profile", token=ann["token"])).status == 401
    assert (await api.post("/api/login", {"email": ann["email"], "password": "brand-new-pass"})).status == 200


@pytest.mark.parametrize("config", [REQUIRED], indirect=True)
async def test_graphql_refuses_writes_of_the_unverified_and_resends_the_link(api, restify, smtp):
    smtp.start()
    ann = await api.register("Ann")
    refused = await graphql(api, CREATE, token=ann["token"])
    assert refused["data"] is None
    assert (refused["errors"][0]["message"], refused["errors"][0]["extensions"]) == (
        NOT_VERIFIED["message"], {"code": "EMAIL_NOT_VERIFIED"})
    assert await graphql(api, "mutation { resendVerification }", token=ann["token"]) == {
        "data": {"resendVerification": True}}
    anonymous = await graphql(api, "mutation { resendVerification }")
    assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert (await api.get(await mailed_link(restify, smtp))).status == 200
    assert await graphql(api, CREATE, token=ann["token"]) == {"data": {"createPost": {"title": "Hello"}}}


@pytest.mark.parametrize("config", [REQUIRED], indirect=True)
async def test_mcp_refuses_writes_of_the_unverified(api, restify, smtp, connect):  # noqa: F811
    smtp.start()
    ann = await api.register("Ann")
    async with connect(ann["token"]) as session:
        assert error(await session.call_tool("posts-store-tool", {"title": "Hello"})) == NOT_VERIFIED
        assert ok(await session.call_tool("posts-index-tool", {}))["data"] == []
        assert (await api.get(await mailed_link(restify, smtp))).status == 200
        assert ok(await session.call_tool("posts-store-tool", {"title": "Hello"}))["data"]["attributes"]["title"] \
            == "Hello"
