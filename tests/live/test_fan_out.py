"""How one change reaches many subscribers: what they share, and what still bounds each of them."""
import asyncio

import pytest

from service.core.declarations.context import Context
from service.core.live.feeds import feeds
from service.core.operations import auth
from tests.live.conftest import PREFIX, WAIT

BODY = "x" * 300_000


async def as_user(restify, token: str) -> Context:
    return Context(user=await auth.authenticate(restify, token), door="rest")


async def test_users_shown_the_same_record_share_one_event_and_others_get_their_own(restify, db, api, ann, bob):
    first = await feeds(restify).subscribe("posts", await as_user(restify, ann["token"]))
    second = await feeds(restify).subscribe("posts", await as_user(restify, bob["token"]))
    try:
        await db.collection("posts").insert({"title": "nobody's"})
        mine, theirs = await first.next(WAIT), await second.next(WAIT)
        assert mine is theirs  # one event: one frame and one GraphQL result for both
        assert mine.kind == "created" and mine.body["data"]["attributes"]["title"] == "nobody's"
        made = await api.post(f"{PREFIX}/posts", {"title": "Ann's"}, token=ann["token"])
        mine, theirs = await first.next(WAIT), await second.next(WAIT)
        assert mine.id == theirs.id == made.json["data"]["id"]
        assert (mine.body["data"]["meta"]["authorizedToUpdate"], theirs.body["data"]["meta"]["authorizedToUpdate"]) \
            == (True, False)  # shown differently: an event each
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("config", [{"idle_ms": 3_600_000}], indirect=True)  # a rest no test outlasts
async def test_a_write_of_this_process_goes_out_without_waiting_for_the_watchers_rest(restify, db):
    guest = Context(door="rest", extras={"address": "127.0.0.1"})
    subscription = await feeds(restify).subscribe("posts", guest)
    try:
        made = await db.collection("posts").insert({"title": "now"})
        event = await subscription.next(WAIT)
        assert event is not None and (event.kind, event.id) == ("created", made["id"])
    finally:
        subscription.close()


@pytest.mark.parametrize("config", [{"max_queue": 2}], indirect=True)
async def test_an_sse_reader_that_stops_reading_is_dropped_not_buffered(restify, db, base_url, ann):
    """Changes are written straight to a subscriber's socket only while it takes them: once it is backed
    up they queue, bounded, and past the bound the subscriber is dropped."""
    host, port = base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET {PREFIX}/posts/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ann['token']}\r\n"
                     "\r\n".encode())
        assert b" 200 " in await asyncio.wait_for(reader.readline(), WAIT)  # then it reads nothing more
        for number in range(200):
            await db.collection("posts").insert({"title": str(number), "body": BODY})
            if feeds(restify).count() == 0:
                break
        assert feeds(restify).count() == 0
    finally:
        writer.close()
