"""Each user's writes are paced (service/core/identity/pacing.py): a bucket of `throttle.write_burst`
records refilled at `throttle.writes_per_minute`; a short shortfall waits, a longer one is a 429 after a
pause, and nothing of a refused write is written. The bucket's clock and sleeps are the test's."""
import pytest

from service.config import Settings
from service.core.declarations.registry import load_app
from service.openapi.document import build_document
from service.core.identity.pacing import MAX_BUCKETS, Buckets, buckets
from service.core.kernel import TooManyRequests
from storage import Filter
from tests.conftest import ROOT
from tests.graphql.test_endpoint import run

POSTS = "/api/restify/posts"


class Clock:
    """The buckets' clock; a sleep is written down and moves it on (`passing`), or not, as for writes
    that come from several clients at once."""

    def __init__(self, passing: bool = True) -> None:
        self.now, self.slept, self.passing = 1000.0, [], passing

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds if self.passing else 0

    def drive(self, restify) -> None:
        found = buckets(restify)
        found.clock, found.sleep = self, self.sleep


@pytest.fixture
def config(config):
    # 60 a minute (one a second), three at once; bulks of three at most, so the burst is three.
    return {**config, "throttle": {"writes_per_minute": 60, "write_burst": 3}, "bulk": {"max_items": 3}}


def refusal(wait: int) -> str:
    return (f"Too many writes: each user may write 3 records at once and 60 a minute (throttle.writes_per_minute). "
            f"Try again in {wait} seconds.")


async def stored(db) -> list[str]:
    return sorted(d["title"] for d in await db.collection("posts").find(Filter()))


async def test_writes_past_the_burst_wait_their_turn_then_are_refused_with_nothing_written(api, restify, ann, db):
    clock = Clock()
    clock.drive(restify)
    for n in range(3):
        assert (await api.post(POSTS, {"title": f"t{n}"}, token=ann["token"])).status == 201
    assert clock.slept == []
    # one short: it waits a second for it, then writes
    assert (await api.post(POSTS, {"title": "t3"}, token=ann["token"])).status == 201
    assert clock.slept == [1.0]
    # three short (the bucket is empty): refused after a pause of a second, nothing of the bulk written
    refused = await api.post(f"{POSTS}/bulk", [{"title": "b0"}, {"title": "b1"}, {"title": "b2"}],
                             token=ann["token"])
    assert refused.status == 429 and refused.headers["Retry-After"] == "3"
    assert refused.json == {"message": refusal(3)}
    assert clock.slept == [1.0, 1.0]
    assert await stored(db) == ["t0", "t1", "t2", "t3"]
    clock.now += 3  # refilled: the same bulk is written whole
    assert (await api.post(f"{POSTS}/bulk", [{"title": "b0"}, {"title": "b1"}, {"title": "b2"}],
                           token=ann["token"])).status == 201
    assert await stored(db) == ["b0", "b1", "b2", "t0", "t1", "t2", "t3"]


async def test_each_user_has_a_bucket_and_every_door_draws_on_it(api, restify, ann):
    clock = Clock(passing=False)
    clock.drive(restify)
    assert (await api.post(f"{POSTS}/bulk", [{"title": "a"}, {"title": "b"}, {"title": "c"}],
                           token=ann["token"])).status == 201
    created = await api.post(POSTS, {"title": "d"}, token=ann["token"])  # waits a second
    record = created.json["data"]["id"]
    refused = await api.patch(f"{POSTS}/{record}", {"title": "e"}, token=ann["token"])
    assert refused.status == 429 and refused.json == {"message": refusal(2)}
    body = await run(api, 'mutation { createPost(input: {title: "g"}) { id } }', token=ann["token"])
    assert body["errors"][0]["extensions"]["code"] == "TOO_MANY_REQUESTS"
    assert body["errors"][0]["message"] == refusal(2)
    bob = await api.register("Bob")
    assert (await api.post(POSTS, {"title": "bob's"}, token=bob["token"])).status == 201  # his own bucket
    assert (await api.delete(f"{POSTS}/{record}", token=ann["token"])).status == 429
    clock.now += 2
    assert (await api.delete(f"{POSTS}/{record}", token=ann["token"])).status == 204


async def test_reads_are_not_paced(api, restify, ann):
    clock = Clock()
    clock.drive(restify)
    assert (await api.post(f"{POSTS}/bulk", [{"title": "a"}, {"title": "b"}, {"title": "c"}],
                           token=ann["token"])).status == 201
    for _ in range(10):
        assert (await api.get(POSTS, token=ann["token"])).status == 200
    assert clock.slept == []


async def test_no_pace_when_the_setting_is_unset(api, restify, ann):
    restify.settings.set("throttle", "writes_per_minute", 0)
    clock = Clock()
    clock.drive(restify)
    for n in range(8):
        assert (await api.post(POSTS, {"title": f"t{n}"}, token=ann["token"])).status == 201
    assert clock.slept == []


def test_a_bucket_refills_at_the_pace_and_the_kept_buckets_stay_bounded():
    kept = Buckets()
    clock = Clock()
    kept.clock = clock
    assert kept.take("ann", 3, 60, 3) == 0  # empty now
    clock.now += 0.5
    assert kept.take("ann", 1, 60, 3) == 0.5  # half refilled: waits the other half
    with pytest.raises(TooManyRequests) as refused:
        kept.take("ann", 1, 60, 3)  # two short now (it took one it had not got)
    assert refused.value.retry_after == 2
    clock.now += 100
    assert kept.take("ann", 3, 60, 3) == 0  # never more than the burst
    for n in range(MAX_BUCKETS - 1):
        kept.take(f"user:{n}", 1, 60, 3)
    clock.now += 60  # every bucket is full again but ann's (her three were taken 60 s ago: full too)
    kept.take("bob", 1, 60, 3)  # one more than the process keeps: the full ones are forgotten
    assert list(kept.left) == ["bob"]
    assert kept.take("ann", 3, 60, 3) == 0  # a forgotten bucket is a full one


async def test_a_profile_change_is_a_write_too(api, restify, ann, db):
    clock = Clock(passing=False)
    clock.drive(restify)
    assert (await api.post(f"{POSTS}/bulk", [{"title": "a"}, {"title": "b"}, {"title": "c"}],
                           token=ann["token"])).status == 201
    assert (await api.put("/api/restify/profile", {"name": "Ann B", "email": ann["email"]}, token=ann["token"])).status == 200
    refused = await api.put("/api/restify/profile", {"name": "Ann C", "email": ann["email"]},
                            token=ann["token"])
    assert refused.status == 429 and refused.json == {"message": refusal(2)}
    assert (await db.collection("users").find_by_id(ann["id"]))["name"] == "Ann B"


def test_the_openapi_document_lists_429_for_every_write_while_writes_are_paced():
    def writes(document: dict) -> dict[str, list[str]]:
        return {f"{method.upper()} {path}": sorted(operation["responses"])
                for path, item in document["paths"].items() for method, operation in item.items()
                if method in ("post", "put", "patch", "delete") and path.startswith("/api/restify/posts")}
    paced = writes(build_document(load_app(ROOT), Settings({}, app_dir=ROOT)))
    assert paced and all("429" in statuses for statuses in paced.values())
    free = writes(build_document(load_app(ROOT), Settings({"throttle": {"writes_per_minute": 0}}, app_dir=ROOT)))
    assert "429" not in free["POST /api/restify/posts"] and "429" not in free["DELETE /api/restify/posts/{id}"]
