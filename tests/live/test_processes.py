"""The database is the bus: a write on one `restify serve` process reaches a subscriber on another."""
import json

import httpx
from httpx_sse import connect_sse

from tests.processes import REQUEST_WAIT, ROOT, Server, register, request

PREFIX = "/api/restify"


def test_a_write_and_a_logout_on_one_process_reach_a_subscriber_on_another(database_env, tmp_path):
    env = {**database_env, "RESTIFY_LIVE_IDLE_MS": "20"}
    first = Server(ROOT, env, log_dir=tmp_path)
    second = Server(ROOT, env, log_dir=tmp_path)
    try:
        token = register(second.port)
        with httpx.Client(base_url=f"http://127.0.0.1:{first.port}", timeout=REQUEST_WAIT) as client:
            with connect_sse(client, "GET", f"{PREFIX}/posts/events",
                             headers={"Authorization": f"Bearer {token}"}) as source:
                assert source.response.status_code == 200
                status, created = request(second.port, "POST", f"{PREFIX}/posts", {"title": "elsewhere"}, token)
                assert status == 201, created
                events = source.iter_sse()
                event = next(events)
                assert (event.event, json.loads(event.data)) == ("created", created)
                assert request(second.port, "POST", "/api/logout", token=token)[0] == 204
                event = next(events)
                assert (event.event, json.loads(event.data)["code"]) == ("error", "UNAUTHENTICATED")
    finally:
        assert first.stop() == 0
        assert second.stop() == 0
