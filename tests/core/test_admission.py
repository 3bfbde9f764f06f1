"""What an index query costs (service/core/reading/admission.py): which queries are classed expensive, whose
turn each takes, and how turns are given and refused."""
import asyncio
import time

import pytest

from service import field
from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.declarations.relations import BelongsTo
from service.core.kernel.errors import Busy
from service.core.reading.admission import Admission, expense, owner
from service.core.reading.query import IndexQuery, parse_index
from tests.conftest import ROOT

FIELDS = [field("title").searchable().sortable(), field("views").numeric().matchable().sortable(),
          field("user_id").matchable()]
SETTINGS = Settings(app_dir=ROOT)


class Posts:
    """Enough of a resource for `parse_index`: a `user` relation searched and sorted by name."""
    relations = {"user": BelongsTo("user", "UserRepository").searchable("name").sortable("name")}
    per_page = None


class Plain(Posts):
    relations: dict = {}


def query(text: str, resource=Posts, fields=FIELDS) -> IndexQuery:
    params = dict(part.split("=", 1) for part in text.split("&") if part)
    return parse_index(resource(), fields, params, SETTINGS)


@pytest.mark.parametrize("text, resource, fields, reason", [
    ("search=a", Posts, FIELDS, "a search through related records"),
    ("search=a", Plain, FIELDS, "a search"),
    ("search=a", Plain, [field("views").numeric()], None),  # nothing to search: no query runs for it
    ("search=", Posts, FIELDS, None),
    ("search=  ", Posts, FIELDS, None),  # blanks only: no search
    ("sort=user.name", Posts, FIELDS, "a sort by user.name"),
    ("sort=-user.name,views", Posts, FIELDS, "a sort by user.name"),
    ("sort=-views,title", Posts, FIELDS, None),
    ("user_id[in]=" + ",".join(map(str, range(101))), Plain, FIELDS, "an in list of more than 100 values on user_id"),
    ("views[nin]=" + ",".join(map(str, range(101))), Plain, FIELDS, "an in list of more than 100 values on views"),
    ("views[in]=" + ",".join(map(str, range(100))), Plain, FIELDS, None),
    ("page=668", Plain, FIELDS, "a page beyond the first 10,000 records"),  # skips 10,005 of 15 per page
    ("page=667", Plain, FIELDS, None),                                       # skips 9,990
    ("perPage=100&page=102", Plain, FIELDS, "a page beyond the first 10,000 records"),
    ("page=668&cursor=", Plain, FIELDS, None),  # a cursor walk reads any depth by keyset
])
def test_what_is_expensive(text, resource, fields, reason):
    assert expense(resource(), fields, query(text, resource, fields)) == reason


@pytest.mark.parametrize("text, indexed, reason", [
    ("search=a", True, "a search through related records"),  # the relation's matches are read first
    ("search=a&sort=relevance", True, None),                   # ranked: $text alone, read from its index
    ("search=a&sort=relevance", False, "a search"),            # the embedded server: a substring test
])
def test_a_text_search_the_database_reads_from_its_text_index_is_not_expensive(registry, text, indexed, reason):
    posts = registry.get("posts")
    fields = posts.fields(Context(action="index"))
    assert expense(posts, fields, query(text, lambda: posts, fields), indexed) == reason


def test_the_owner_is_the_user_or_the_guests_address():
    assert owner(Context(user=Model({"id": "u1"}), extras={"address": "10.0.0.1"})) == "user:u1"
    assert owner(Context(door="rest", extras={"address": "10.0.0.1"})) == "guest:10.0.0.1"
    assert owner(Context(door="mcp")) == "guest:mcp"  # stdio: one client, the process's own


async def test_one_turn_per_owner_and_at_most_the_limit_at_once():
    admission = Admission()
    async with admission.turn("user:a", 2, "a search"):
        with pytest.raises(Busy) as same:
            async with admission.turn("user:a", 2, "a search"):
                pass
        assert same.value.retry_after == 1 and "one at a time for each user" in same.value.message
        async with admission.turn("user:b", 2, "a search"):
            with pytest.raises(Busy) as full:
                async with admission.turn("user:c", 2, "a sort by user.name"):
                    pass
            assert full.value.message == ("This query is expensive (a sort by user.name), and the server is running "
                                          "as many of those as it takes at once (2). Try again in 1 second.")
        assert admission.running == {"user:a"}
    assert admission.running == set()


async def test_a_turn_is_given_back_when_the_query_fails():
    admission = Admission()
    with pytest.raises(ZeroDivisionError):
        async with admission.turn("user:a", 1, "a search"):
            1 / 0  # noqa: B018 - the query's failure
    async with admission.turn("user:a", 1, "a search"):
        assert admission.running == {"user:a"}


async def test_retry_after_follows_what_expensive_queries_took_lately():
    admission = Admission()
    admission.seconds = 0.01
    assert admission.retry_after() == 1
    outside = time.monotonic()
    async with admission.turn("user:a", 1, "a search"):
        await asyncio.sleep(0.05)
    outside = time.monotonic() - outside  # the turn took about 0.05 s or more, and no longer than this
    # One fifth of the way from the old estimate to what the turn took, however long the sleep lasted.
    assert 0.01 + 0.2 * (0.049 - 0.01) < admission.seconds <= 0.01 + 0.2 * (outside - 0.01)
    admission.seconds = 2.2
    with pytest.raises(Busy) as refused:
        async with admission.turn("user:a", 1, "a search"), admission.turn("user:b", 1, "a search"):
            pass
    assert refused.value.retry_after == 3 and refused.value.message.endswith("Try again in 3 seconds.")


class Clock:
    """The admission's clock, moved by the test: a duration or a rest is what the test says it is."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def clocked() -> tuple[Admission, Clock]:
    admission, clock = Admission(), Clock()
    admission.clock, admission.sleep = clock, clock.sleep
    return admission, clock


async def refused(admission: Admission, who: str, rest: float = 0.0, share: float = 1.0) -> Busy:
    with pytest.raises(Busy) as caught:
        async with admission.turn(who, 10, "a search", rest, share):
            pass
    return caught.value


async def test_an_owner_rests_as_long_as_its_last_expensive_query_took():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        clock.now += 2.5  # the query took 2.5 s
    busy = await refused(admission, "user:a", 1.0)
    assert busy.message == ("This query is expensive (a search), and after one, each user rests as long as it took "
                            "(query.expensive_rest) before the next. Try again in 3 seconds.")
    assert busy.retry_after == 3 and clock.now == 102.5
    async with admission.turn("user:b", 10, "a search", 1.0, 1.0):  # another owner does not wait
        pass
    clock.now += 3  # as the refusal said: the rest is over
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        assert admission.running == {"user:a"} and clock.now == 105.5
        clock.now += 2.5
    clock.now += 1.4  # 1.1 s left: more than PACED, refused at once
    assert (await refused(admission, "user:a", 1.0)).retry_after == 2 and clock.now == pytest.approx(109.4)


async def test_a_rest_of_less_than_paced_is_waited_out():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        clock.now += 2.5
    clock.now += 1.6  # 0.9 s left: waited out, then run
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        assert admission.running == {"user:a"} and clock.now == pytest.approx(105.0)


async def test_an_owner_asking_again_before_its_retry_after_is_paused_first():
    """A client looping on refusals costs a request each PACED seconds at most, not each few milliseconds."""
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        clock.now += 5  # the owner rests 5 s
    assert (await refused(admission, "user:a", 1.0)).retry_after == 5 and clock.now == 105
    clock.now += 0.1  # too early: paused a second, then refused with what is left
    assert (await refused(admission, "user:a", 1.0)).retry_after == 4 and clock.now == pytest.approx(106.1)
    assert (await refused(admission, "user:a", 1.0)).retry_after == 3 and clock.now == pytest.approx(107.1)
    async with admission.turn("user:b", 10, "a search", 1.0, 1.0):  # others are not paused
        assert clock.now == pytest.approx(107.1)
    clock.now = 109.6  # 0.4 s of the rest left: waited out, as any short rest (not refused, so not paused)
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        assert clock.now == pytest.approx(110.0)


async def test_a_query_waits_out_a_short_rest_and_its_owner_still_runs_one_at_a_time():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        clock.now += 0.5  # a page of search results: the next page waits 0.5 s
    order = []

    async def sleep(seconds: float) -> None:
        # While the next page waits, another query of the same owner is refused, as while one runs.
        order.append(("waiting", sorted(admission.waiting), seconds))
        assert (await refused(admission, "user:a", 1.0)).message.endswith(
            "expensive queries run one at a time for each user: wait for your other one to finish. "
            "Try again in 1 second.")
        clock.now += seconds

    admission.sleep = sleep
    async with admission.turn("user:a", 10, "a search", 1.0, 1.0):
        order.append(("running", sorted(admission.running), clock.now))
    assert order == [("waiting", ["user:a"], 0.5), ("running", ["user:a"], 100.5 + 0.5)]
    assert admission.waiting == set()


async def test_a_wait_that_the_process_rest_lengthens_past_paced_is_refused():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 0.0, 0.5):
        clock.now += 0.6  # the process rests 0.6 s

    async def sleep(seconds: float) -> None:
        clock.now += seconds
        admission.process_rest += 0.8  # meanwhile another query's rest is added

    admission.sleep = sleep
    busy = await refused(admission, "user:b", 0.0, 0.5)
    assert busy.message == ("This query is expensive (a search), and the server gives them only part of its time "
                            "(query.expensive_share). Try again in 1 second.")
    assert admission.waiting == set() and admission.running == set()


async def test_the_rest_is_a_multiple_of_the_duration_and_none_when_it_is_0():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a search", 3.0, 1.0):
        clock.now += 2
    assert (await refused(admission, "user:a")).retry_after == 6
    async with admission.turn("user:b", 10, "a search", 0.0, 1.0):
        clock.now += 2
    async with admission.turn("user:b", 10, "a search", 0.0, 1.0):
        pass


async def test_the_process_rests_so_that_expensive_queries_take_at_most_their_share_of_its_time():
    admission, clock = clocked()
    async with admission.turn("user:a", 10, "a sort by user.name", 0.0, 0.25):
        clock.now += 1  # 1 s of a 0.25 share: the process takes no other for 3 s
    busy = await refused(admission, "user:b")
    assert busy.message == ("This query is expensive (a search), and the server gives them only part of its time "
                            "(query.expensive_share). Try again in 3 seconds.")
    assert busy.retry_after == 3
    clock.now += 3
    # Two at once, 1 s each: their rests add up (6 s), the process's time being the one they shared.
    async with admission.turn("user:b", 10, "a search", 0.0, 0.25), \
            admission.turn("user:c", 10, "a search", 0.0, 0.25):
        clock.now += 1
    assert (await refused(admission, "user:d")).retry_after == 6
    clock.now += 6
    async with admission.turn("user:d", 10, "a search", 0.0, 0.25):
        assert admission.running == {"user:d"}
