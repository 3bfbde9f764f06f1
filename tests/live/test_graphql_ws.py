"""GraphQL subscriptions on `/graphql` over WebSocket (`graphql-transport-ws`): the happy paths
through gql's websockets transport, the protocol's edges through a plain `websockets` client."""
import asyncio
import json

import pytest
import websockets
from gql import Client, gql
from gql.transport.websockets import WebsocketsTransport

from service.core.live.feeds import feeds
from tests.live.conftest import PREFIX, WAIT

PROTOCOL = "graphql-transport-ws"
POST_CHANGED = ("subscription ($filter: PostFilter, $id: ID) "
                "{ postChanged(filter: $filter, id: $id) { operation id record { id title published } } }")


def socket_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://") + "/graphql"


def session(base_url: str, token: str | None = None, key: str = "Authorization") -> Client:
    transport = WebsocketsTransport(url=socket_url(base_url), subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
                                    init_payload={key: f"Bearer {token}"} if token else {})
    return Client(transport=transport)


async def subscribed(restify, count: int) -> None:
    """Waits until the server holds `count` live subscriptions: writes made after this reach them."""
    async def enough() -> None:
        while feeds(restify).count() < count:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(enough(), WAIT)


class Stream:
    """A gql subscription read one result at a time."""

    def __init__(self, results) -> None:
        self._results = results

    async def next(self) -> dict:
        return (await asyncio.wait_for(self._results.__anext__(), WAIT))["postChanged"]

    async def close(self) -> None:
        await self._results.aclose()  # sends `complete`; the session then closes at once


async def open_stream(restify, client_session, count: int = 1, **variables) -> tuple[Stream, asyncio.Task]:
    request = gql(POST_CHANGED)  # a request of its own: gql keeps variables on the request object
    request.variable_values = variables or None
    results = client_session.subscribe(request)
    first = asyncio.ensure_future(results.__anext__())
    await subscribed(restify, count)
    return Stream(results), first


async def post(api, token, **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "t", **attributes}, token=token)
    assert response.status == 201, response.body
    return response.json["data"]


async def test_changes_reach_a_subscriber_as_created_updated_deleted(api, restify, base_url, ann):
    async with session(base_url, ann["token"], key="authorization") as client:  # the key in any case
        stream, first = await open_stream(restify, client)
        created = await post(api, ann["token"], title="One")
        assert (await asyncio.wait_for(first, WAIT))["postChanged"] == {
            "operation": "CREATED", "id": created["id"],
            "record": {"id": created["id"], "title": "One", "published": False}}
        await api.patch(f"{PREFIX}/posts/{created['id']}", {"title": "Two"}, token=ann["token"])
        assert (await stream.next())["record"]["title"] == "Two"
        await api.delete(f"{PREFIX}/posts/{created['id']}", token=ann["token"])
        assert await stream.next() == {"operation": "DELETED", "id": created["id"], "record": None}
        await stream.close()


@pytest.mark.parametrize("sent", ["headers", "init_payload"])
async def test_the_default_transport_of_gql_subscribes(api, restify, base_url, ann, published_or_own, sent):
    # gql's default offers both `graphql-ws` (legacy Apollo) and `graphql-transport-ws`, and reads the
    # chosen one from the answer's `Sec-WebSocket-Protocol` (by that spelling); missing it, it speaks Apollo.
    transport = WebsocketsTransport(url=socket_url(base_url), **{sent: {"Authorization": f"Bearer {ann['token']}"}})
    async with Client(transport=transport) as client:
        assert transport.response_headers["Sec-WebSocket-Protocol"] == PROTOCOL
        assert transport.response_headers["Server"] == "restify"
        stream, first = await open_stream(restify, client)
        draft = await post(api, ann["token"], title="Mine")  # a draft: only a subscriber known as ann sees it
        assert (await asyncio.wait_for(first, WAIT))["postChanged"] == {
            "operation": "CREATED", "id": draft["id"], "record": {"id": draft["id"], "title": "Mine", "published": False}}
        await stream.close()


async def test_filter_and_id_arguments_choose_records(api, restify, base_url, ann):
    followed = await post(api, ann["token"], title="followed")
    async with session(base_url, ann["token"]) as client:
        published, first = await open_stream(restify, client, filter={"published": {"eq": True}})
        one, first_of_one = await open_stream(restify, client, count=2, id=followed["id"])
        await post(api, ann["token"], title="draft", published=False)
        shown = await post(api, ann["token"], title="out", published=True)
        await api.patch(f"{PREFIX}/posts/{followed['id']}", {"title": "changed"}, token=ann["token"])
        assert (await asyncio.wait_for(first, WAIT))["postChanged"]["id"] == shown["id"]
        assert (await asyncio.wait_for(first_of_one, WAIT))["postChanged"]["record"]["title"] == "changed"
        await published.close()
        await one.close()


async def test_the_filter_takes_the_operators_of_the_index(api, restify, base_url, ann, bob):
    """The index's `<Type>Filter`: each changed record is tested with its operators (here ne, in, isNull)."""
    async with session(base_url, ann["token"]) as client:
        chosen = {"published": {"ne": False}, "user_id": {"in": [bob["id"]], "isNull": False}}
        stream, first = await open_stream(restify, client, filter=chosen)
        await post(api, bob["token"], title="Bob's draft", published=False)
        await post(api, ann["token"], title="Ann's post", published=True)
        shown = await post(api, bob["token"], title="Bob's post", published=True)
        assert (await asyncio.wait_for(first, WAIT))["postChanged"]["record"] == {
            "id": shown["id"], "title": "Bob's post", "published": True}
        await api.patch(f"{PREFIX}/posts/{shown['id']}", {"published": False}, token=bob["token"])
        assert await stream.next() == {"operation": "DELETED", "id": shown["id"], "record": None}  # it left the filter
        await stream.close()


async def test_each_subscriber_gets_only_what_show_allows_them(api, restify, base_url, ann, bob, published_or_own):
    async with session(base_url, bob["token"]) as client:
        stream, first = await open_stream(restify, client)
        await post(api, ann["token"], title="Ann's draft", published=False)
        public = await post(api, ann["token"], title="Ann's post", published=True)
        assert (await asyncio.wait_for(first, WAIT))["postChanged"]["id"] == public["id"]
        await api.patch(f"{PREFIX}/posts/{public['id']}", {"published": False}, token=ann["token"])
        assert await stream.next() == {"operation": "DELETED", "id": public["id"], "record": None}
        await stream.close()


async def test_a_record_loaded_before_subscribing_leaves_and_enters_the_view(api, restify, base_url, ann, bob,
                                                                              published_or_own):
    public = await post(api, ann["token"], title="Ann's post", published=True)  # loaded by index, before
    async with session(base_url, ann["token"]) as hers, session(base_url, bob["token"]) as his:
        her_stream, her_first = await open_stream(restify, hers)
        his_stream, his_first = await open_stream(restify, his, count=2)
        await api.patch(f"{PREFIX}/posts/{public['id']}", {"published": False}, token=ann["token"])
        assert (await asyncio.wait_for(his_first, WAIT))["postChanged"] == {
            "operation": "DELETED", "id": public["id"], "record": None}
        assert (await asyncio.wait_for(her_first, WAIT))["postChanged"] == {
            "operation": "UPDATED", "id": public["id"],
            "record": {"id": public["id"], "title": "Ann's post", "published": False}}
        await api.patch(f"{PREFIX}/posts/{public['id']}", {"published": True}, token=ann["token"])
        assert await his_stream.next() == {
            "operation": "CREATED", "id": public["id"],
            "record": {"id": public["id"], "title": "Ann's post", "published": True}}
        assert (await her_stream.next())["operation"] == "UPDATED"
        await his_stream.close()
        await her_stream.close()


# -- the protocol, through a plain websockets client ---------------------------------------------------
async def connect(base_url: str, token: str | None = None, **options):
    ws = await websockets.connect(socket_url(base_url), subprotocols=[PROTOCOL], **options)
    await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"} if token else {}}))
    return ws


async def received(ws) -> dict:
    return json.loads(await asyncio.wait_for(ws.recv(), WAIT))


async def closed(ws) -> tuple[int, str]:
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), WAIT)
    return ws.close_code, ws.close_reason


async def test_ping_is_answered_with_pong_after_the_acknowledgement(base_url, ann):
    async with await connect(base_url, ann["token"]) as ws:
        assert await received(ws) == {"type": "connection_ack"}
        await ws.send(json.dumps({"type": "ping"}))
        assert await received(ws) == {"type": "pong"}


@pytest.mark.parametrize("token", ["0123456789abcdef01234567|wrong", ""])
async def test_a_refused_token_closes_with_4403(base_url, token):
    ws = await websockets.connect(socket_url(base_url), subprotocols=[PROTOCOL])
    await ws.send(json.dumps({"type": "connection_init", "payload": {"AUTHORIZATION": f"Bearer {token}"}}))
    assert await closed(ws) == (4403, "Forbidden")


async def test_a_revoked_token_closes_the_connection_with_4403(api, restify, base_url, ann):
    async with await connect(base_url, ann["token"]) as ws:
        assert (await received(ws))["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": "subscription { postChanged { id } }"}}))
        await subscribed(restify, 1)
        assert (await api.post("/api/logout", token=ann["token"])).status == 204
        assert await closed(ws) == (4403, "Forbidden")


async def test_errors_are_error_messages_with_a_code(base_url, ann):
    async with await connect(base_url, ann["token"]) as ws:
        assert (await received(ws))["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": "subscription { nothing { id } }"}}))
        message = await received(ws)
        assert (message["id"], message["type"]) == ("1", "error")
        assert message["payload"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


@pytest.mark.parametrize("config", [{"max_per_user": 1}], indirect=True)
async def test_a_subscription_over_the_limit_is_an_error_and_the_others_go_on(base_url, restify, ann):
    async with await connect(base_url, ann["token"]) as ws:
        assert (await received(ws))["type"] == "connection_ack"
        for id in ("1", "2"):
            await ws.send(json.dumps({"id": id, "type": "subscribe",
                                      "payload": {"query": "subscription { postChanged { id } }"}}))
        message = await received(ws)
        assert message == {"id": "2", "type": "error", "payload": [{
            "message": "Too many live subscriptions (at most 1 per user).", "locations": [{"line": 1, "column": 16}],
            "path": ["postChanged"], "extensions": {"code": "TOO_MANY_REQUESTS"}}]}
        assert feeds(restify).count() == 1


async def test_the_protocol_refuses_what_it_does_not_allow(base_url, ann):
    ws = await websockets.connect(socket_url(base_url), subprotocols=[PROTOCOL])
    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": "subscription { postChanged { id } }"}}))
    assert await closed(ws) == (4401, "Unauthorized")
    async with await connect(base_url, ann["token"]) as ws:
        assert (await received(ws))["type"] == "connection_ack"
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert await closed(ws) == (4429, "Too many initialisation requests")


async def test_queries_run_over_the_socket_too(api, base_url, ann):
    created = await post(api, ann["token"], title="Queried")
    async with session(base_url, ann["token"]) as client:
        request = gql("query ($id: ID!) { post(id: $id) { title } }")
        request.variable_values = {"id": created["id"]}
        result = await client.execute(request)
    assert result == {"post": {"title": "Queried"}}


@pytest.mark.parametrize("config", [{"max_queue": 2}], indirect=True)
async def test_a_consumer_too_slow_to_keep_up_is_closed_with_4503(restify, db, base_url):
    # The client reads nothing (its own queue holds one message): the socket fills, then the feed's queue.
    async with await connect(base_url, max_queue=1) as ws:
        await asyncio.sleep(0)
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": "subscription { postChanged { id record { body } } }"}}))
        await subscribed(restify, 1)
        body = "x" * 300_000
        for number in range(120):
            await db.collection("posts").insert({"title": str(number), "body": body})
            if feeds(restify).count() == 0:
                break
        code, reason = await closed(ws)
    assert (code, reason) == (4503, "Too slow: the subscriber did not keep up with the changes")


async def test_another_subprotocol_is_closed_with_4406(base_url):
    ws = await websockets.connect(socket_url(base_url), subprotocols=["graphql-ws", PROTOCOL + "-old"])
    assert await closed(ws) == (4406, "Subprotocol not acceptable")
