"""Deliveries to a real receiver: signed, one id per change on every attempt, retried after a refusal and
a timeout, in order per record; payloads as the webhook's reader sees the record."""
import time

from service.core.declarations import Webhook
from service.webhooks import deliver, place
from tests.webhooks.conftest import EVENTS, SECRET, hook
from tests.webhooks.receiver import Receiver


async def _passes(restify, receiver: Receiver, count: int, passes: int = 12) -> None:
    """Sender passes, each a minute after the last (so every retry comes due), until `count` deliveries
    were accepted."""
    start = time.time()
    for step in range(passes):
        for resource, webhook in [(r, w) for r in restify.registry.resources.values() for w in r.webhooks]:
            await deliver(restify, resource, webhook, now=start + 60 * step)
        if len(receiver.accepted()) >= count:
            return
    raise AssertionError(f"{len(receiver.accepted())} of {count} deliveries accepted: {receiver.requests}")


async def test_a_refusal_and_a_timeout_then_every_change_once_in_order(api, restify, registry, receiver, ann):
    receiver.script = ["refuse", "hang"]
    hook(registry, "posts", Webhook(receiver.url, events=EVENTS, secret=SECRET))
    await place(restify)
    first = (await api.post("/api/restify/posts", {"title": "One", "body": "b"}, token=ann["token"])).json["data"]
    second = (await api.post("/api/restify/posts", {"title": "Two"}, token=ann["token"])).json["data"]
    assert (await api.patch(f"/api/restify/posts/{first['id']}", {"title": "One!"}, token=ann["token"])).status == 200
    assert (await api.delete(f"/api/restify/posts/{first['id']}", token=ann["token"])).status == 204
    await _passes(restify, receiver, 4)

    assert [r.outcome for r in receiver.requests[:2]] == ["refuse", "hang"]
    accepted = receiver.accepted()
    ids = [r.headers["X-Restify-Delivery"] for r in accepted]
    assert len(ids) == len(set(ids)) == 4  # each change exactly once
    # The refused attempt was the first post's creation, the timed-out one the second's (another record
    # goes on meanwhile); each was accepted later under the same delivery id.
    refused, hung = receiver.requests[:2]
    assert (refused.json["record"], hung.json["record"]) == (first["id"], second["id"])
    assert {refused.headers["X-Restify-Delivery"], hung.headers["X-Restify-Delivery"]} <= set(ids)
    assert all(r.signed_with(SECRET) for r in receiver.requests)
    assert not accepted[0].signed_with("another secret")
    by_record: dict[str, list[tuple[int, str]]] = {}
    for r in accepted:
        body = r.json
        assert body["id"] == r.headers["X-Restify-Delivery"] and body["event"] == r.headers["X-Restify-Event"]
        by_record.setdefault(body["record"], []).append((body["sequence"], body["event"]))
    assert by_record == {first["id"]: [(1, "posts.created"), (2, "posts.updated"), (3, "posts.deleted")],
                         second["id"]: [(1, "posts.created")]}
    bodies = {(r.json["record"], r.json["event"]): r.json for r in accepted}
    assert bodies[(first["id"], "posts.updated")]["data"]["attributes"]["title"] == "One!"
    assert bodies[(first["id"], "posts.deleted")]["data"] == {"id": first["id"], "type": "posts"}
    shown = (await api.get(f"/api/restify/posts/{second['id']}")).json["data"]
    assert bodies[(second["id"], "posts.created")]["data"] == shown  # as REST's show gives it to a guest
    assert await restify.db.deliveries().waiting(f"posts {receiver.url}", 10) == []


async def test_a_webhook_sends_what_its_user_sees_and_a_guest_sees_nothing_hidden(api, restify, registry, receiver,
                                                                                  ann, bob):
    guests = Receiver().start()
    try:
        hook(registry, "users", Webhook(receiver.url, events=("users.updated",), secret=SECRET, user=ann["email"]),
             Webhook(guests.url, events=("users.updated",), secret=SECRET))
        await place(restify)
        changed = await api.patch(f"/api/restify/users/{ann['id']}", {"bio": "Hello"}, token=ann["token"])
        assert changed.status == 200, changed.body
        await _passes(restify, receiver, 1)
        (received,) = receiver.accepted()
        data = received.json["data"]
        assert (data["id"], data["attributes"]["bio"]) == (ann["id"], "Hello")
        assert "password" not in data["attributes"]  # hidden: never sent
        assert guests.requests == []  # a guest may not see users: nothing is sent to the guests' webhook
    finally:
        guests.stop()


async def test_only_the_declared_events_are_sent(api, restify, registry, receiver, ann):
    hook(registry, "posts", Webhook(receiver.url, events=("posts.deleted",), secret=SECRET))
    await place(restify)
    post = (await api.post("/api/restify/posts", {"title": "Gone soon"}, token=ann["token"])).json["data"]
    assert (await api.delete(f"/api/restify/posts/{post['id']}", token=ann["token"])).status == 204
    await _passes(restify, receiver, 1)
    assert [(r.json["event"], r.json["record"]) for r in receiver.requests] == [("posts.deleted", post["id"])]
