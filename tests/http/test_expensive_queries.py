"""Queries that could keep the database busy for everyone: bounded `in` lists, and expensive queries
that take turns (service/core/reading/admission.py), over real HTTP on the server `restify serve` runs.

An expensive query is held inside its turn by the admission's `on_admit` hook, or a turn is taken
directly through the running application's admission object: nothing depends on timing."""
import asyncio
from contextlib import asynccontextmanager

import pytest

from service.core.reading.admission import admission
from tests.http.test_index_queries import POSTS, bad_request, seed_post
from tests.http.test_proxy_headers import http_server  # noqa: F401  (a fixture: the server `restify serve` runs)

SEARCH = f"{POSTS}?search=a"  # the demo's posts search their title and their author's name


@pytest.fixture
def config(config):
    # Behind a proxy that sets X-Forwarded-For: guests from several addresses on one test server.
    return {**config, "server": {"trust_proxy_headers": True}}


@pytest.fixture
def posts(db, io_loop):
    io_loop.run_sync(lambda: seed_post(db, "apple"))


@asynccontextmanager
async def held(restify):
    """The next expensive query to be admitted, held inside its turn until the block ends."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(who: str) -> None:
        admission(restify).on_admit = None
        entered.set()
        await release.wait()

    admission(restify).on_admit = hold
    try:
        yield entered
    finally:
        release.set()


def busy(response, message: str) -> None:
    assert response.status == 429, response.body
    assert response.json == {"message": message}
    assert response.headers["Retry-After"] == "1"


def own_turn(reason: str) -> str:
    return (f"This query is expensive ({reason}), and expensive queries run one at a time for each user: wait for "
            "your other one to finish. Try again in 1 second.")


# -- in / nin lists ------------------------------------------------------------------------------

async def test_an_in_list_over_the_limit_is_a_400_naming_the_field_before_any_read(api, posts, commands):
    commands.reset()
    message = "The views[in] filter may not have more than 1000 values (query.max_in_values)."
    bad_request(await api.get(f"{POSTS}?views[in]=" + ",".join(str(n) for n in range(1001))), message,
                {"views[in]": [message]})
    assert commands.reads() == []
    response = await api.get(f"{POSTS}?views[in]=" + ",".join(str(n) for n in range(1000)))
    assert response.status == 200 and len(response.json["data"]) == 1


async def test_repeated_values_count_too(api, posts, restify, commands):
    restify.settings.set("query", "max_in_values", 3)
    commands.reset()
    message = "The user_id[nin] filter may not have more than 3 values (query.max_in_values)."
    sent = "&".join(f"user_id[nin]=a{n}" for n in range(4))
    bad_request(await api.get(f"{POSTS}?{sent}"), message, {"user_id[nin]": [message]})
    assert commands.reads() == []
    assert (await api.get(f"{POSTS}?user_id[nin]=a,b&user_id[nin]=c")).status == 200


# -- turns ---------------------------------------------------------------------------------------

async def test_a_second_expensive_query_of_a_user_is_refused_while_the_first_runs(api, restify, ann, posts):
    async with held(restify) as entered:
        first = asyncio.ensure_future(api.get(f"{SEARCH}pple", token=ann["token"]))
        await asyncio.wait_for(entered.wait(), 60)
        assert admission(restify).running == {f"user:{ann['id']}"}
        busy(await api.get(f"{POSTS}?sort=user.name", token=ann["token"]), own_turn("a sort by user.name"))
        busy(await api.get(SEARCH, token=ann["token"]), own_turn("a search through related records"))
        # a plain query of the same user is never refused, nor another user's expensive one
        plain = await api.get(f"{POSTS}?sort=-views&views[gte]=0", token=ann["token"])
        assert plain.status == 200
        other = await api.register("Bob")
        assert (await api.get(SEARCH, token=other["token"])).status == 200
    response = await asyncio.wait_for(first, 60)
    assert response.status == 200 and [p["attributes"]["title"] for p in response.json["data"]] == ["apple"]
    assert admission(restify).running == set()
    assert (await api.get(SEARCH, token=ann["token"])).status == 200  # the turn is given back


@pytest.mark.parametrize("query, reason", [
    ("search=x", "a search through related records"),
    ("sort=-user.name", "a sort by user.name"),
    ("views[in]=" + ",".join(str(n) for n in range(101)), "an in list of more than 100 values on views"),
    ("views[nin]=" + ",".join(str(n) for n in range(101)), "an in list of more than 100 values on views"),
    ("perPage=10&page=1002", "a page beyond the first 10,000 records"),
    ('filter={"any":[{"views":{"gte":5}},{"published":{"eq":true}}]}', "a filter with any or not"),
    ('filter={"not":{"views":{"gte":5}}}', "a filter with any or not"),
])
async def test_what_is_expensive_takes_a_turn(api, restify, ann, query, reason):
    async with admission(restify).turn(f"user:{ann['id']}", 10, "held"):
        busy(await api.get(f"{POSTS}?{query}", token=ann["token"]), own_turn(reason))


@pytest.mark.parametrize("query", [
    "", "views[in]=" + ",".join(str(n) for n in range(100)), "perPage=10&page=1001", "perPage=10&page=5000&cursor=",
    "sort=-views,title&published=false", "search=", 'filter={"all":[{"views":{"gte":5}},{"published":{"eq":true}}]}',
])
async def test_what_is_plain_never_waits_for_a_turn(api, restify, ann, query):
    restify.settings.set("query", "expensive_concurrency", 1)
    async with admission(restify).turn(f"user:{ann['id']}", 1, "held"):
        response = await api.get(f"{POSTS}?{query}", token=ann["token"])
        assert response.status == 200, response.body


async def test_a_process_runs_at_most_its_limit_at_once(api, restify, ann, posts):
    restify.settings.set("query", "expensive_concurrency", 2)
    async with admission(restify).turn("user:someone", 2, "held"), admission(restify).turn("guest:10.0.0.1", 2, "held"):
        response = await api.get(SEARCH, token=ann["token"])
        busy(response, "This query is expensive (a search through related records), and the server is running as "
                       "many of those as it takes at once (2). Try again in 1 second.")
        assert (await api.get(POSTS, token=ann["token"])).status == 200
    restify.settings.set("query", "expensive_concurrency", None)  # unset: the number of CPU cores
    async with admission(restify).turn("user:someone", 2, "held"):
        assert (await api.get(SEARCH, token=ann["token"])).status == 200


async def test_guests_take_turns_by_their_address(api, restify, posts):
    async with admission(restify).turn("guest:203.0.113.1", 10, "held"):
        refused = await api.get(SEARCH, headers={"X-Forwarded-For": "203.0.113.1"})
        busy(refused, own_turn("a search through related records"))
        answered = await api.get(SEARCH, headers={"X-Forwarded-For": "203.0.113.2"})
        assert answered.status == 200 and len(answered.json["data"]) == 1
        assert (await api.get(POSTS, headers={"X-Forwarded-For": "203.0.113.1"})).status == 200


async def test_an_action_on_all_records_of_a_search_takes_a_turn_too(api, restify, ann, posts):
    async with admission(restify).turn(f"user:{ann['id']}", 10, "held"):
        response = await api.post(f"{POSTS}/actions?action=publish-posts&search=apple", {"repositories": "all"},
                                  token=ann["token"])
        busy(response, own_turn("a search through related records"))


# -- rests -----------------------------------------------------------------------------------------

class Clock:
    """The admission's clock: each expensive query the server admits takes `took` seconds on it."""

    def __init__(self, took: float) -> None:
        self.now, self.took = 100.0, took

    def __call__(self) -> float:
        return self.now

    async def admitted(self, _who: str) -> None:
        self.now += self.took

    async def sleep(self, seconds: float) -> None:
        self.now += seconds

    def drive(self, restify) -> None:
        found = admission(restify)
        found.clock, found.on_admit, found.sleep = self, self.admitted, self.sleep


def rest_refusal(reason: str, wait: int) -> str:
    return (f"This query is expensive ({reason}), and after one, each user rests as long as it took "
            f"(query.expensive_rest) before the next. Try again in {wait} seconds.")


def share_refusal(reason: str, wait: int) -> str:
    return (f"This query is expensive ({reason}), and the server gives them only part of its time "
            f"(query.expensive_share). Try again in {wait} seconds.")


async def test_after_an_expensive_query_its_user_and_the_process_rest(api, restify, ann, posts):
    restify.settings.set("query", "expensive_rest", 1)
    restify.settings.set("query", "expensive_share", 0.5)
    clock = Clock(2.5)
    clock.drive(restify)
    assert (await api.get(f"{SEARCH}pple", token=ann["token"])).status == 200  # took 2.5 s
    refused = await api.get(f"{POSTS}?sort=user.name", token=ann["token"])
    assert refused.status == 429 and refused.headers["Retry-After"] == "3"
    assert refused.json == {"message": rest_refusal("a sort by user.name", 3)}
    bob = await api.register("Bob")
    refused = await api.get(SEARCH, token=bob["token"])  # 2.5 s of a 0.5 share: the process rests 2.5 s too
    assert refused.status == 429 and refused.headers["Retry-After"] == "3"
    assert refused.json == {"message": share_refusal("a search through related records", 3)}
    assert (await api.get(f"{POSTS}?sort=-views", token=ann["token"])).status == 200  # plain: never refused
    clock.now += 2.5
    answered = await api.get(f"{SEARCH}pple", token=bob["token"])
    assert answered.status == 200 and [p["attributes"]["title"] for p in answered.json["data"]] == ["apple"]


async def test_no_rest_when_the_settings_say_none(api, restify, ann, posts):
    restify.settings.set("query", "expensive_rest", 0)
    restify.settings.set("query", "expensive_share", 1)
    clock = Clock(5)
    clock.drive(restify)
    for _ in range(3):
        assert (await api.get(SEARCH, token=ann["token"])).status == 200


async def test_the_defaults_rest_a_user_as_long_and_the_process_three_times_as_long(api, restify, ann, posts):
    restify.settings.set("query", "expensive_rest", None)  # unset: the defaults (1 and 0.25)
    restify.settings.set("query", "expensive_share", None)
    clock = Clock(2)
    clock.drive(restify)
    assert (await api.get(SEARCH, token=ann["token"])).status == 200
    clock.now += 1.5  # the user's rest (0.5 s left) would be waited out; the process's (4.5 s) is not
    assert (await api.get(SEARCH, token=ann["token"])).json == {
        "message": share_refusal("a search through related records", 5)}
    clock.now += 0.5  # the user's rest is over; the process's (6 s) is not, nor the 5 s the refusal said:
    assert (await api.get(SEARCH, token=ann["token"])).json == {  # paused a second, then refused
        "message": share_refusal("a search through related records", 3)}
    clock.now += 4
    assert (await api.get(SEARCH, token=ann["token"])).status == 200


async def test_a_client_paging_through_search_results_is_slowed_not_refused(api, restify, ann, posts):
    restify.settings.set("query", "expensive_rest", None)  # the defaults: the process rests 3x what one took
    restify.settings.set("query", "expensive_share", None)
    clock = Clock(0.3)
    clock.drive(restify)
    first = await api.get(f"{SEARCH}&perPage=1", token=ann["token"])
    second = await api.get(f"{SEARCH}&perPage=1&page=2", token=ann["token"])  # waits out the 0.9 s rest
    assert (first.status, second.status) == (200, 200)
    assert clock.now == pytest.approx(100 + 0.3 + 0.9 + 0.3)


# -- kept counts -----------------------------------------------------------------------------------

def counts_sent(commands) -> int:
    return sum(1 for name, collection in commands.reads() if name == "aggregate" and collection == "posts")


async def test_an_expensive_querys_total_is_kept_for_its_next_pages_until_a_write(api, restify, ann, posts, db,
                                                                                  commands):
    restify.settings.set("query", "expensive_count_seconds", 60)
    commands.reset()
    first = await api.get(f"{POSTS}?search=pple&perPage=1", token=ann["token"])
    second = await api.get(f"{POSTS}?search=pple&perPage=1&page=2", token=ann["token"])
    assert (first.json["meta"]["total"], second.json["meta"]["total"], counts_sent(commands)) == (1, 1, 1)
    stored = await api.post(POSTS, {"title": "pineapple"}, token=ann["token"])
    assert stored.status == 201
    commands.reset()
    again = await api.get(f"{POSTS}?search=pple&perPage=1", token=ann["token"])
    assert (again.json["meta"]["total"], counts_sent(commands)) == (2, 1)  # the write made it stale


async def test_no_total_is_kept_when_the_setting_says_none_nor_for_a_plain_query(api, restify, ann, posts, commands):
    restify.settings.set("query", "expensive_count_seconds", 0)
    commands.reset()
    for _ in range(2):
        assert (await api.get(f"{POSTS}?search=pple", token=ann["token"])).json["meta"]["total"] == 1
    assert counts_sent(commands) == 2
    restify.settings.set("query", "expensive_count_seconds", 60)
    commands.reset()
    for _ in range(2):
        assert (await api.get(f"{POSTS}?views=0", token=ann["token"])).json["meta"]["total"] == 1
    assert counts_sent(commands) == 2


@pytest.mark.parametrize("query, reason", [
    ("group=user_id,published", "an aggregation by several keys"),
    ("group=created_at:week", "an aggregation by week"),
    ("group=user_id&search=x", "a search through related records"),
])
async def test_an_expensive_aggregation_takes_a_turn(api, restify, ann, query, reason):
    async with admission(restify).turn(f"user:{ann['id']}", 10, "held"):
        busy(await api.get(f"{POSTS}/aggregate?{query}", token=ann["token"]), own_turn(reason))
        # one key, or a date by day, month or year, is a plain aggregation
        for plain in ("group=user_id", "group=created_at:month&metrics=count,sum:views"):
            assert (await api.get(f"{POSTS}/aggregate?{plain}", token=ann["token"])).status == 200


def estimates_sent(commands) -> int:
    return sum(1 for name, collection in commands.reads() if name == "count" and collection == "posts")


async def test_the_total_of_a_list_without_filters_is_kept_until_a_write(api, restify, ann, posts, db, commands):
    commands.reset()
    totals = [(await api.get(POSTS)).json["meta"]["total"] for _ in range(2)]
    assert (totals, estimates_sent(commands)) == ([1, 1], 1)
    await db.collection("posts")._col.insert_one({"title": "by another program"})
    assert (await api.get(POSTS)).json["meta"]["total"] == 1  # another program's write: seen within the second
    assert (await api.post(POSTS, {"title": "pineapple"}, token=ann["token"])).status == 201
    commands.reset()
    assert ((await api.get(POSTS)).json["meta"]["total"], estimates_sent(commands)) == (3, 1)


async def test_no_estimated_total_is_kept_when_the_setting_says_none(api, restify, posts, db, commands):
    restify.settings.set("query", "estimated_count_seconds", 0)
    commands.reset()
    assert (await api.get(POSTS)).json["meta"]["total"] == 1
    await db.collection("posts")._col.insert_one({"title": "by another program"})
    assert (await api.get(POSTS)).json["meta"]["total"] == 2
    assert estimates_sent(commands) == 2
