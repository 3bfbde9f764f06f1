"""`restify serve` delivers webhooks, and a killed service's successor goes on where it stopped: a receiver
that refuses, times out, then accepts gets every change exactly once, in order per record."""
from tests.processes import REQUEST_WAIT, Server, register, request, restify
from tests.webhooks.conftest import EVENTS, SECRET, declare
from tests.webhooks.receiver import Receiver

FAST_RETRIES = {"RESTIFY_WEBHOOKS_TIMEOUT_SECONDS": "1", "RESTIFY_WEBHOOKS_RETRY_SECONDS": "0.2",
                "RESTIFY_WEBHOOKS_POLL_SECONDS": "0.2", "RESTIFY_WEBHOOKS_LEASE_SECONDS": "2"}


def test_every_change_once_in_order_across_a_killed_service(database_env, app_copy, tmp_path):
    receiver = Receiver(script=("refuse", "hang"), then="refuse").start()
    declare(app_copy, f"[Webhook({receiver.url!r}, events={EVENTS!r}, secret={SECRET!r})]")
    env = {**database_env, **FAST_RETRIES}
    first = Server(app_copy, env, log_dir=tmp_path)
    try:
        token = register(first.port)
        one = request(first.port, "POST", "/api/restify/posts", {"title": "One"}, token)[1]["data"]["id"]
        assert request(first.port, "PATCH", f"/api/restify/posts/{one}", {"title": "One!"}, token)[0] == 200
        two = request(first.port, "POST", "/api/restify/posts", {"title": "Two"}, token)[1]["data"]["id"]
        receiver.wait_for(4, REQUEST_WAIT)  # refused, timed out, refused again: the sender is at work
    finally:
        first.process.kill()  # a crash: no lease released, nothing finished
        first.process.wait()
        first.log.close()
    second = Server(app_copy, env, log_dir=tmp_path)
    try:
        assert request(second.port, "PATCH", f"/api/restify/posts/{two}", {"title": "Two!"}, token)[0] == 200
        assert request(second.port, "DELETE", f"/api/restify/posts/{one}", None, token)[0] == 204
        receiver.set_then("accept")
        receiver.wait_for(5, REQUEST_WAIT, outcome="accept")
        failed = restify("webhooks:failed", env=env, app_dir=app_copy)
        assert (failed.returncode, failed.stdout) == (0, "No webhook delivery failed.\n"), failed.stderr
    finally:
        assert second.stop() == 0
        receiver.stop()
    accepted = receiver.accepted()
    ids = [r.headers["X-Restify-Delivery"] for r in accepted]
    assert len(ids) == len(set(ids)) == 5, [r.json for r in accepted]
    assert all(r.signed_with(SECRET) for r in receiver.requests)
    by_record: dict[str, list[tuple[int, str]]] = {}
    for r in accepted:
        by_record.setdefault(r.json["record"], []).append((r.json["sequence"], r.json["event"]))
    assert by_record == {one: [(1, "posts.created"), (2, "posts.updated"), (3, "posts.deleted")],
                         two: [(1, "posts.created"), (2, "posts.updated")]}
