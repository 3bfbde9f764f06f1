"""`GET <prefix>/<r>/events`: server-sent events of a repository's changes, read with httpx-sse."""
import json
from datetime import datetime, timedelta

import pytest

import service.core.live.feeds
from tests.live.conftest import PREFIX

UNAUTHENTICATED = {"message": "Unauthenticated."}


def data(event) -> dict:
    return json.loads(event.data)


async def post(api, token, **attributes):
    response = await api.post(f"{PREFIX}/posts", {"title": "t", **attributes}, token=token)
    assert response.status == 201, response.body
    return response.json["data"]


async def test_created_updated_and_deleted_reach_a_subscriber_as_show_gives_them(api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    assert feed.response.status_code == 200
    assert feed.response.headers["content-type"] == "text/event-stream; charset=utf-8"
    created = await post(api, ann["token"], title="First")
    event = await feed.next()
    shown = (await api.get(f"{PREFIX}/posts/{created['id']}", token=ann["token"])).json
    assert (event.event, data(event)) == ("created", shown)
    await api.patch(f"{PREFIX}/posts/{created['id']}", {"title": "Second"}, token=ann["token"])
    event = await feed.next()
    shown = (await api.get(f"{PREFIX}/posts/{created['id']}", token=ann["token"])).json
    assert (event.event, data(event)) == ("updated", shown)
    assert shown["data"]["attributes"]["title"] == "Second"
    await api.delete(f"{PREFIX}/posts/{created['id']}", token=ann["token"])
    event = await feed.next()
    assert (event.event, data(event)) == ("deleted", {"data": {"id": created["id"], "type": "posts"}})


async def test_each_event_carries_the_flags_of_its_own_subscriber(api, feeds, ann, bob):
    mine = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    theirs = await feeds(f"{PREFIX}/posts/events", token=bob["token"])
    guest = await feeds(f"{PREFIX}/posts/events")
    created = await post(api, ann["token"])
    assert data(await mine.next())["data"]["meta"]["authorizedToUpdate"] is True
    assert data(await theirs.next())["data"]["meta"]["authorizedToUpdate"] is False
    assert data(await guest.next())["data"]["meta"] == {
        "authorizedToShow": True, "authorizedToStore": False, "authorizedToUpdate": False,
        "authorizedToDelete": False, "version": 1}
    second = await post(api, bob["token"])
    for feed in (mine, theirs, guest):  # one event each for the first post, then the second
        assert data(await feed.next())["data"]["id"] == second["id"]
    assert created["id"] != second["id"]


async def test_ids_are_resume_tokens_and_last_event_id_replays_what_was_missed(api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    first = await post(api, ann["token"], title="one")
    seen = await feed.next()
    assert seen.id
    await feed.close()
    missed = [await post(api, ann["token"], title=t) for t in ("two", "three")]
    resumed = await feeds(f"{PREFIX}/posts/events", token=ann["token"], headers={"Last-Event-ID": seen.id})
    replayed = [await resumed.next(), await resumed.next()]
    assert [(e.event, data(e)["data"]["id"]) for e in replayed] == [("created", p["id"]) for p in missed]
    live = await post(api, ann["token"], title="four")
    event = await resumed.next()
    assert (event.event, data(event)["data"]["id"]) == ("created", live["id"])
    assert first["id"] not in {data(e)["data"]["id"] for e in replayed}


@pytest.mark.parametrize("token", ["nx:999999999", "garbage", "826E0F2B4A000000012B"])
async def test_an_unknown_last_event_id_gets_a_reset_then_live_events(api, feeds, ann, token):
    await post(api, ann["token"])
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"], headers={"Last-Event-ID": token})
    event = await feed.next()
    assert (event.event, data(event), event.id) == ("reset", {}, "")
    created = await post(api, ann["token"])
    event = await feed.next()
    assert (event.event, data(event)["data"]["id"]) == ("created", created["id"])


async def test_id_parameter_follows_one_record(api, feeds, ann):
    followed, other = await post(api, ann["token"]), await post(api, ann["token"])
    feed = await feeds(f"{PREFIX}/posts/events?id={followed['id']}", token=ann["token"])
    await api.patch(f"{PREFIX}/posts/{other['id']}", {"title": "not followed"}, token=ann["token"])
    await api.patch(f"{PREFIX}/posts/{followed['id']}", {"title": "followed"}, token=ann["token"])
    event = await feed.next()
    assert (event.event, data(event)["data"]["id"]) == ("updated", followed["id"])
    assert data(event)["data"]["attributes"]["title"] == "followed"


async def test_exact_match_filters_choose_records_and_leaving_them_is_a_delete(api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events?published=true", token=ann["token"])
    await post(api, ann["token"], title="draft", published=False)
    shown = await post(api, ann["token"], title="out", published=True)
    event = await feed.next()
    assert (event.event, data(event)["data"]["id"]) == ("created", shown["id"])  # the draft was skipped
    patched = await api.patch(f"{PREFIX}/posts/{shown['id']}", {"published": False}, token=ann["token"])
    assert patched.status == 200, patched.body
    event = await feed.next()
    assert (event.event, data(event)) == ("deleted", {"data": {"id": shown["id"], "type": "posts"}})


async def test_filters_with_operators_choose_records_as_the_index_does(api, feeds, ann, bob):
    feed = await feeds(f"{PREFIX}/posts/events?published[ne]=false&user_id[in]={bob['id']}", token=ann["token"])
    await post(api, bob["token"], title="Bob's draft", published=False)
    await post(api, ann["token"], title="Ann's post", published=True)
    shown = await post(api, bob["token"], title="Bob's post", published=True)
    event = await feed.next()
    assert (event.event, data(event)["data"]["id"]) == ("created", shown["id"])  # the two others were skipped


async def test_a_bad_filter_is_a_400_before_the_stream_starts(feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events?published=maybe", token=ann["token"])
    assert feed.response.status_code == 400
    assert (await feed.body())["message"] == "The published filter must be true or false."


async def test_an_unknown_repository_is_a_404(feeds, ann):
    feed = await feeds(f"{PREFIX}/nothing/events", token=ann["token"])
    assert (feed.response.status_code, await feed.body()) == (
        404, {"message": "No repository 'nothing'; the repositories are: comments, posts, tags, users."})


@pytest.mark.parametrize("name", ["token", "access_token", "Authorization"])
async def test_a_token_in_the_query_string_is_refused(feeds, ann, name):
    feed = await feeds(f"{PREFIX}/posts/events?{name}={ann['token']}")
    assert feed.response.status_code == 400
    assert "Tokens are not accepted in the query string" in (await feed.body())["message"]


async def test_a_bad_token_is_a_401(feeds):
    feed = await feeds(f"{PREFIX}/posts/events", token="0123456789abcdef01234567|wrong")
    assert (feed.response.status_code, await feed.body()) == (401, UNAUTHENTICATED)


# -- policies, per subscriber and per event ------------------------------------------------------
async def test_a_subscriber_sees_only_what_show_allows_them(api, feeds, ann, bob, published_or_own):
    hers = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    his = await feeds(f"{PREFIX}/posts/events", token=bob["token"])
    draft = await post(api, ann["token"], title="draft", published=False)
    assert data(await hers.next())["data"]["id"] == draft["id"]
    # Publishing brings it into Bob's view (a create for him: the draft never reached him); unpublishing
    # takes it out of his view: a delete for him only.
    await api.patch(f"{PREFIX}/posts/{draft['id']}", {"published": True}, token=ann["token"])
    event = await his.next()
    assert (event.event, data(event)["data"]["id"]) == ("created", draft["id"])
    await api.patch(f"{PREFIX}/posts/{draft['id']}", {"published": False}, token=ann["token"])
    assert (await his.next()).event == "deleted"
    assert [(await hers.next()).event for _ in range(2)] == ["updated", "updated"]


async def test_a_record_loaded_before_subscribing_leaves_and_enters_the_view(api, feeds, ann, bob,
                                                                              published_or_own):
    # Bob loaded Ann's published post by index, then subscribed: it was never sent on his stream.
    public = await post(api, ann["token"], title="public", published=True)
    hers = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    his = await feeds(f"{PREFIX}/posts/events", token=bob["token"])
    await api.patch(f"{PREFIX}/posts/{public['id']}", {"published": False}, token=ann["token"])
    event = await his.next()
    assert (event.event, data(event)) == ("deleted", {"data": {"id": public["id"], "type": "posts"}})
    event = await hers.next()
    assert (event.event, data(event)["data"]["id"], data(event)["data"]["attributes"]["published"]) == \
        ("updated", public["id"], False)
    await api.patch(f"{PREFIX}/posts/{public['id']}", {"published": True}, token=ann["token"])
    event = await his.next()
    assert (event.event, data(event)["data"]["id"], data(event)["data"]["attributes"]["published"]) == \
        ("created", public["id"], True)
    assert (await hers.next()).event == "updated"


async def test_a_delete_reaches_only_those_who_could_see_the_record(api, feeds, ann, bob, published_or_own):
    his = await feeds(f"{PREFIX}/posts/events", token=bob["token"])
    draft = await post(api, ann["token"], title="secret draft", published=False)
    await api.delete(f"{PREFIX}/posts/{draft['id']}", token=ann["token"])
    public = await post(api, ann["token"], title="public", published=True)
    await api.delete(f"{PREFIX}/posts/{public['id']}", token=ann["token"])
    events = [await his.next(), await his.next()]
    assert [(e.event, data(e)["data"]["id"]) for e in events] == [("created", public["id"]), ("deleted", public["id"])]


async def test_fields_hidden_from_the_api_never_reach_a_feed(api, feeds, ann, bob):
    member = await feeds(f"{PREFIX}/users/events", token=ann["token"])
    changed = await api.patch(f"{PREFIX}/users/{bob['id']}", {"name": "Bobby"}, token=bob["token"])
    assert changed.status == 200, changed.body
    event = await member.next()
    shown = (await api.get(f"{PREFIX}/users/{bob['id']}", token=ann["token"])).json
    assert (event.event, data(event)) == ("updated", shown)
    assert "password" not in data(event)["data"]["attributes"]


# -- the token and its ticket -----------------------------------------------------------------------
async def test_logging_out_ends_the_stream(api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    assert (await api.post("/api/logout", token=ann["token"])).status == 204
    event = await feed.next()
    assert (event.event, data(event)) == ("error", {"message": "The token of this subscription was revoked or has expired.",
                                                   "code": "UNAUTHENTICATED"})


async def test_a_ticket_opens_the_stream_once(api, feeds, ann):
    issued = await api.post(f"{PREFIX}/posts/events/ticket", token=ann["token"])
    assert issued.status == 201
    ticket = issued.json["data"]["ticket"]
    assert set(issued.json["data"]) == {"ticket", "expires_at"}
    feed = await feeds(f"{PREFIX}/posts/events?ticket={ticket}")
    assert feed.response.status_code == 200
    created = await post(api, ann["token"])
    assert data(await feed.next())["data"]["meta"]["authorizedToUpdate"] is True  # it acts as Ann
    again = await feeds(f"{PREFIX}/posts/events?ticket={ticket}")
    assert (again.response.status_code, await again.body()) == (401, UNAUTHENTICATED)
    assert created["id"]


async def test_a_ticket_serves_only_its_own_repository_and_needs_a_user(api, feeds, ann):
    ticket = (await api.post(f"{PREFIX}/posts/events/ticket", token=ann["token"])).json["data"]["ticket"]
    other = await feeds(f"{PREFIX}/comments/events?ticket={ticket}")
    assert (other.response.status_code, await other.body()) == (401, UNAUTHENTICATED)
    guest = await api.post(f"{PREFIX}/posts/events/ticket")
    assert (guest.status, guest.json) == (401, UNAUTHENTICATED)
    forged = await feeds(f"{PREFIX}/posts/events?ticket={ticket.split('|')[0]}|forged")
    assert forged.response.status_code == 401


async def test_revoking_the_token_ends_a_stream_opened_with_its_ticket(api, feeds, ann):
    ticket = (await api.post(f"{PREFIX}/posts/events/ticket", token=ann["token"])).json["data"]["ticket"]
    feed = await feeds(f"{PREFIX}/posts/events?ticket={ticket}")
    await api.post("/api/logout", token=ann["token"])
    assert (await feed.next()).event == "error"


# -- limits ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", [{"max_per_user": 2}], indirect=True)
async def test_subscriptions_per_user_are_limited(api, feeds, ann, bob):
    for _ in range(2):
        assert (await feeds(f"{PREFIX}/posts/events", token=ann["token"])).response.status_code == 200
    third = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    assert (third.response.status_code, await third.body()) == (
        429, {"message": "Too many live subscriptions (at most 2 per user)."})
    assert (await feeds(f"{PREFIX}/posts/events", token=bob["token"])).response.status_code == 200


@pytest.mark.parametrize("config", [{"heartbeat_seconds": 0.05}], indirect=True)
async def test_a_comment_line_keeps_an_idle_stream_open(client, ann):
    async with client.stream("GET", f"{PREFIX}/posts/events", headers={"Authorization": f"Bearer {ann['token']}"}) as r:
        lines = r.aiter_lines()
        assert await lines.__anext__() == ": live"
        assert await lines.__anext__() == ""
        assert await lines.__anext__() == ": keep-alive"


@pytest.mark.parametrize("config", [{"ticket_seconds": -1}], indirect=True)
async def test_an_expired_ticket_is_refused(api, feeds, ann):
    ticket = (await api.post(f"{PREFIX}/posts/events/ticket", token=ann["token"])).json["data"]["ticket"]
    feed = await feeds(f"{PREFIX}/posts/events?ticket={ticket}")
    assert (feed.response.status_code, await feed.body()) == (401, UNAUTHENTICATED)


TOKEN_TTL = 600


class _TenMinutesAhead(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime.now(tz) + timedelta(seconds=TOKEN_TTL)


@pytest.fixture
def short_tokens(config, monkeypatch):
    """Tokens that expire, and a stream whose clock runs one token lifetime ahead: the token it was opened
    with expires as soon as it is open, however long opening took (a real second-long lifetime can end
    before a busy machine has opened the stream)."""
    config["auth"]["token_ttl"] = TOKEN_TTL
    monkeypatch.setattr(service.core.live.feeds, "datetime", _TenMinutesAhead)
    return config


async def test_a_token_that_expires_ends_the_stream(short_tokens, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    assert feed.response.status_code == 200
    event = await feed.next()
    assert (event.event, data(event)["code"]) == ("error", "UNAUTHENTICATED")


# -- HEAD ----------------------------------------------------------------------------------------------
HEAD_WAIT = 10.0  # a HEAD that held the stream open would wait for the heartbeat (30 s here)


async def head(client, path: str, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return await client.head(path, headers=headers, timeout=HEAD_WAIT)


@pytest.mark.parametrize("config", [{"max_per_user": 2}], indirect=True)
async def test_head_answers_at_once_with_the_status_and_headers_of_get_and_holds_no_stream(api, client, feeds, ann):
    for _ in range(3):  # more than the limit: none of them is counted as a subscription
        response = await head(client, f"{PREFIX}/posts/events?published=true", ann["token"])
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert (response.headers["cache-control"], response.headers["x-accel-buffering"]) == ("no-cache", "no")
        assert response.content == b"" and "etag" not in response.headers
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    assert feed.response.headers["content-type"] == response.headers["content-type"]
    assert (await feeds(f"{PREFIX}/posts/events", token=ann["token"])).response.status_code == 200
    # both slots taken by streams: HEAD answers what GET would, 429
    assert (await head(client, f"{PREFIX}/posts/events", ann["token"])).status_code == 429


async def test_head_refuses_what_get_refuses(client, ann):
    for path, token, status in ((f"{PREFIX}/posts/events?published=maybe", ann["token"], 400),
                                (f"{PREFIX}/nothing/events", ann["token"], 404),
                                (f"{PREFIX}/posts/events?token={ann['token']}", None, 400),
                                (f"{PREFIX}/posts/events", "0123456789abcdef01234567|wrong", 401)):
        response = await head(client, path, token)
        assert (response.status_code, response.content) == (status, b"")


async def test_head_with_a_ticket_does_not_use_it_up(api, client, feeds, ann):
    ticket = (await api.post(f"{PREFIX}/posts/events/ticket", token=ann["token"])).json["data"]["ticket"]
    assert (await head(client, f"{PREFIX}/posts/events?ticket={ticket}")).status_code == 200
    assert (await head(client, f"{PREFIX}/comments/events?ticket={ticket}")).status_code == 401
    feed = await feeds(f"{PREFIX}/posts/events?ticket={ticket}")
    assert feed.response.status_code == 200
    assert (await head(client, f"{PREFIX}/posts/events?ticket={ticket}")).status_code == 401  # used by GET
