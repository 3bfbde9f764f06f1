"""Abilities on the live doors: a read token follows its repository's feed (SSE, GraphQL subscription)
and is refused another's with `MISSING_ABILITY`."""
import asyncio
import json

from gql import gql
from gql.transport.exceptions import TransportQueryError

from tests.http.test_abilities import missing, token_for
from tests.live.conftest import PREFIX, WAIT
from tests.live.test_graphql_ws import open_stream, post, session


async def test_a_read_token_follows_the_posts_feed_and_is_refused_the_comments_feed(api, feeds, ann):
    reader = await token_for(api, ann, "posts:read")
    feed = await feeds(f"{PREFIX}/posts/events", token=reader)
    assert feed.response.status_code == 200
    created = await post(api, ann["token"], title="Live")
    event = await feed.next()
    assert (event.event, json.loads(event.data)["data"]["id"]) == ("created", created["id"])
    refused = await feeds(f"{PREFIX}/comments/events", token=reader)
    assert refused.response.status_code == 403
    assert json.loads(await refused.response.aread()) == missing("comments:read")


async def test_a_read_token_subscribes_to_posts_and_is_refused_comments(api, restify, base_url, ann):
    reader = await token_for(api, ann, "posts:read")
    async with session(base_url, reader) as client:
        stream, first = await open_stream(restify, client)
        created = await post(api, ann["token"], title="Live")
        assert (await asyncio.wait_for(first, WAIT))["postChanged"]["id"] == created["id"]
        await stream.close()
    async with session(base_url, reader) as client:
        results = client.subscribe(gql("subscription { commentChanged { id } }"))
        try:
            await asyncio.wait_for(results.__anext__(), WAIT)
            raise AssertionError("the subscription was not refused")
        except TransportQueryError as error:
            assert error.errors[0]["extensions"]["code"] == "MISSING_ABILITY"
            assert error.errors[0]["message"] == 'This token lacks the ability "comments:read".'
