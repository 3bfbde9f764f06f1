"""Abilities over GraphQL, through gql's client: a read token reads and is refused a mutation with
`MISSING_ABILITY`; relation fields need their repository's read; the user's tokens as queries and mutations."""
import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXAsyncTransport

from tests.http.test_abilities import post_of, token_for


async def run(api, token: str, query: str, **variables) -> dict:
    transport = HTTPXAsyncTransport(url=api.client.get_url("/graphql"), headers={"Authorization": f"Bearer {token}"})
    request = gql(query)
    request.variable_values = variables or None
    async with Client(transport=transport) as session:
        return await session.execute(request)


async def refused(api, token: str, query: str, ability: str, **variables) -> None:
    with pytest.raises(TransportQueryError) as caught:
        await run(api, token, query, **variables)
    (only,) = caught.value.errors
    assert only["message"] == f'This token lacks the ability "{ability}".'
    assert only["extensions"] == {"code": "MISSING_ABILITY"}


async def test_a_read_token_reads_posts_and_is_refused_every_mutation(api, ann):
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    assert await run(api, reader, "{ postList { id title } }") == {"postList": [{"id": post["id"], "title": "Hello"}]}
    assert await run(api, reader, "query ($id: ID!) { post(id: $id) { title } }", id=post["id"]) == {
        "post": {"title": "Hello"}}
    await refused(api, reader, 'mutation { createPost(input: {title: "x"}) { id } }', "posts:write")
    await refused(api, reader, 'mutation ($id: ID!) { updatePost(id: $id, input: {title: "x"}) { id } }',
                  "posts:write", id=post["id"])
    await refused(api, reader, "mutation ($id: ID!) { deletePost(id: $id) }", "posts:write", id=post["id"])
    await refused(api, reader, "{ commentList { id } }", "comments:read")
    await refused(api, reader, "{ postList { id user { name } } }", "users:read")
    assert (await api.get(f"/api/restify/posts/{post['id']}", token=ann["token"])).json["data"]["attributes"][
        "title"] == "Hello"


async def test_the_user_lists_creates_and_revokes_tokens(api, ann, bob):
    made = await run(api, ann["token"], 'mutation { createToken(name: "ci", abilities: ["posts:read"], '
                                        "expires_in: 600) { token accessToken { id name abilities current } } }")
    created = made["createToken"]
    token_id = created["token"].partition("|")[0]
    assert created["accessToken"] == {"id": token_id, "name": "ci", "abilities": ["posts:read"], "current": False}
    listed = await run(api, created["token"], "{ tokens { name abilities current last_used_at } }")
    assert [(t["name"], t["abilities"], t["current"]) for t in listed["tokens"]] == [
        ("api", ["*"], False), ("ci", ["posts:read"], True)]
    with pytest.raises(TransportQueryError) as caught:
        await run(api, ann["token"], 'mutation { createToken(name: "x", abilities: ["nope:read"]) { token } }')
    assert caught.value.errors[0]["extensions"] == {
        "code": "VALIDATION_FAILED", "errors": {"abilities": ['The ability "nope:read" names no repository.']}}
    await refused(api, created["token"], 'mutation { createToken(name: "x", abilities: ["*"]) { token } }', "*")
    bobs = (await api.get("/api/tokens", token=bob["token"])).json["data"][0]["id"]
    with pytest.raises(TransportQueryError) as caught:
        await run(api, ann["token"], "mutation ($id: ID!) { revokeToken(id: $id) }", id=bobs)
    assert caught.value.errors[0]["extensions"] == {"code": "NOT_FOUND"}
    assert await run(api, ann["token"], "mutation ($id: ID!) { revokeToken(id: $id) }", id=token_id) == {
        "revokeToken": True}
    assert (await api.get("/api/tokens", token=created["token"])).status == 401
