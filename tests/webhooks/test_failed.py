"""Deliveries retried for longer than `webhooks.retry_for` are failed: `restify webhooks:failed` lists them,
`restify webhooks:replay` puts them back in line and the next pass sends them under the same id."""
import time

from service.core.declarations import Webhook
from service.webhooks import deliver, place
from tests.processes import restify as run
from tests.servers import PROFILE
from tests.webhooks.conftest import SECRET, hook


async def test_failed_deliveries_are_listed_and_replayed(api, restify, registry, receiver, ann, mongodb_uri):
    receiver.set_then("refuse")
    hook(registry, "posts", Webhook(receiver.url, events=("posts.created",), secret=SECRET))
    (resource, webhook), = [(r, w) for r in restify.registry.resources.values() for w in r.webhooks]
    await place(restify)
    post = (await api.post("/api/restify/posts", {"title": "Unwanted"}, token=ann["token"])).json["data"]
    start = time.time()
    assert await deliver(restify, resource, webhook, now=start) == 0  # refused: retried in a second
    assert await deliver(restify, resource, webhook, now=start + 86_400) == 0  # retried for a day: given up
    env = {"MONGODB_URI": mongodb_uri, "RESTIFY_DATABASE_NAME": restify.db.name, "RESTIFY_DATABASE_PROFILE": PROFILE}
    listed = run("webhooks:failed", env=env)
    (line,) = listed.stdout.splitlines()
    id, event, record, url, attempts, _captured, error = line.split("\t")
    assert (event, record, url, attempts, error) == ("posts.created", post["id"], receiver.url, "2 attempt(s)",
                                                     "HTTP 500")
    assert run("webhooks:replay", env=env).returncode == 2  # ids or --all
    replayed = run("webhooks:replay", id, env=env)
    assert (replayed.returncode, replayed.stdout) == (0, "Put 1 failed delivery back in line.\n"), replayed.stderr
    receiver.set_then("accept")
    assert await deliver(restify, resource, webhook, now=time.time()) == 1
    assert [r.headers["X-Restify-Delivery"] for r in receiver.requests] == [id, id, id]
    assert run("webhooks:failed", env=env).stdout == "No webhook delivery failed.\n"
