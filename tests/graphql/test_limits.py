"""GraphQL work is bounded by the document's size before any of it runs: the body size,
the tokens parsed, the selections (through fragments and aliases), depth and cost measured once per
fragment; validation only for documents within them, off the event loop. Attacks are refused quickly
with a 4xx or a GraphQL error, and plain requests served meanwhile are not held up.
"""
import asyncio
import gc
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.graphql.test_endpoint import refused, run
from tests.http.test_index_queries import seed_post

# Bounds on work, not on time: CPU seconds, which a busy machine does not stretch the way it stretches the
# clock (there a plain request can wait seconds for a core, and the validating process longer still).
# Before these limits the attacks held the event loop for 2 s (a fragment bomb) to 15 s (four 700 KB
# alias floods) of work; a refusal costs a few milliseconds, and so does a plain read.
REFUSAL_CPU = 0.5  # this process's CPU seconds to refuse one attack
LOOP_CPU = 0.3  # CPU seconds the event loop spends while one request waits for its answer, attacks running
# This process's CPU seconds for a document validated in the worker: it only parses it (validating the
# slow documents below here would cost about half a second).
PARSE_CPU = 0.25
TOO_LARGE = {"message": "The request body is too large."}
TOO_MANY_TOKENS = {"message": "The query has more than 2000 tokens."}
TOO_MANY_SELECTIONS = {"message": "The query selects more than 1000 fields."}


@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's overrides when parametrized indirectly."""
    return {**config, **getattr(request, "param", {})}


# -- the attacks ------------------------------------------------------------------------------------

def fragment_bomb(levels: int = 10) -> str:
    """About 500 bytes: `levels` fragments, each spreading the next four times (4^levels fields)."""
    lines = ["query { postList(first: 1) { ...F0 } }"]
    for n in range(levels):
        inner = " ".join([f"...F{n + 1}"] * 4) if n < levels - 1 else "id"
        lines.append(f"fragment F{n} on Post {{ {inner} }}")
    return "\n".join(lines)


def alias_flood(count: int) -> str:
    return "{ postList(first: 1) { " + " ".join(f"a{n}: id" for n in range(count)) + " } }"


SAME_NAMED = " ".join(["user { id }"] * 400)  # 1,600 tokens that validation compares pairwise


def overlapping_fields(salt: str) -> str:
    """Within every limit, but slow to validate."""
    return f"query Q{salt} {{ postList(first: 1) {{ {SAME_NAMED} }} }}"


def unused_fragment(salt: str) -> str:
    """Selects one field; validation still compares the fields of the fragment it never spreads."""
    return f"query Q{salt} {{ __typename }} fragment F on Post {{ {SAME_NAMED} }}"


def fragment_chain(length: int) -> str:
    """Each fragment nests the next two levels deeper: deep through fragments, small in text."""
    lines = ["query { postList(first: 1) { ...F0 } }"]
    for n in range(length):
        inner = f"...F{n + 1}" if n < length - 1 else "id"
        lines.append(f"fragment F{n} on Post {{ user {{ posts(first: 1) {{ {inner} }} }} }}")
    return "\n".join(lines)


def post_body(query: str, **extra: Any) -> bytes:
    return json.dumps({"query": query, **extra}).encode()


FLOOD = post_body(alias_flood(60_000))  # 700 KB


async def work(send: Awaitable) -> tuple[Any, float]:
    """The response, and the CPU seconds this process (server and client) spent until it arrived."""
    gc.collect()  # a full collection due meanwhile would count too
    started = time.process_time()
    response = await send
    return response, time.process_time() - started


async def loop_work(send: Awaitable) -> tuple[Any, float]:
    """The response, and the CPU seconds the event loop's thread spent until it arrived: whatever ran on
    the loop meanwhile (other requests included) held this one up, and nothing else on the loop did."""
    started = time.thread_time()  # the test's coroutines run on the loop's thread
    response = await send
    return response, time.thread_time() - started


# -- the size of the body ---------------------------------------------------------------------------

async def test_a_body_over_max_query_bytes_is_a_413_and_one_at_the_limit_is_answered(api):
    query = "{ postList { id } }"
    padding = 16_384 - len(post_body(query, pad=""))
    at_limit = await api.request("POST", "/graphql", body=post_body(query, pad="x" * padding),
                                 headers={"Content-Type": "application/json"})
    assert (at_limit.status, at_limit.json) == (200, {"data": {"postList": []}})
    over = await api.request("POST", "/graphql", body=post_body(query, pad="x" * (padding + 1)),
                             headers={"Content-Type": "application/json"})
    assert (over.status, over.json) == (413, TOO_LARGE)


async def test_a_700_kb_query_of_60000_aliases_is_a_413_quickly(api):
    response, cpu = await work(api.request("POST", "/graphql", body=FLOOD,
                                           headers={"Content-Type": "application/json"}))
    assert (response.status, response.json) == (413, TOO_LARGE)
    assert cpu < REFUSAL_CPU


@pytest.mark.parametrize("config", [{"server": {"max_query_bytes": 65_536}}], indirect=True)
async def test_a_get_query_over_max_query_bytes_is_a_414_and_one_at_the_limit_is_answered(api):
    query = "{ postList { id } }"
    at_limit = await api.get("/graphql?" + urlencode({"query": query + " " * (16_384 - len(query))}))
    assert (at_limit.status, at_limit.json) == (200, {"data": {"postList": []}})
    over = await api.get("/graphql?" + urlencode({"query": query + " " * (16_385 - len(query))}))
    assert (over.status, over.json) == (414, {"message": "The GraphQL query is too long."})


# -- tokens and selections --------------------------------------------------------------------------

@pytest.mark.parametrize("config", [{"graphql": {"max_tokens": 20}}], indirect=True)
async def test_parsing_stops_at_max_tokens_with_a_400(api):
    def ids(count: int) -> str:  # 5 tokens around `count` ids
        return "{ postList { " + "id " * count + "} }"
    assert await run(api, ids(15)) == {"data": {"postList": []}}
    response = await api.post("/graphql", {"query": ids(16)})
    assert (response.status, response.json) == (400, {"message": "The query has more than 20 tokens."})


@pytest.mark.parametrize("number", ["1" * 5000, "1." + "5" * 200, "-" + "9" * 101])
async def test_a_number_longer_than_any_scalar_needs_is_a_400_with_a_fixed_text(api, number):
    # Past 4,300 digits Python's int() refuses, and its text would reach the answer.
    response = await api.post("/graphql", {"query": f"{{ postList(page: {number}) {{ id }} }}"})
    assert (response.status, response.json) == (400, {"message": "A number in the query is longer than 100 characters."})
    # 20 digits is within the limit: the Int type refuses it, in graphql-core's own fixed words.
    answer = await run(api, "{ postList(page: 99999999999999999999) { id } }")
    assert [e["message"] for e in answer["errors"]] == [
        "Int cannot represent non 32-bit signed integer value: 99999999999999999999"]


async def test_a_query_of_700_aliases_is_refused_at_the_default_2000_tokens(api):
    response, cpu = await work(api.post("/graphql", {"query": alias_flood(700)}))  # 3 tokens each
    assert (response.status, response.json) == (400, TOO_MANY_TOKENS)
    assert cpu < REFUSAL_CPU


@pytest.mark.parametrize("config", [{"graphql": {"max_selections": 7}}], indirect=True)
async def test_selections_are_counted_through_fragments_and_aliases_and_capped_with_a_400(api, db):
    await seed_post(db, "Hello")
    # postList, then F twice (2 x 3: an alias, a relation and its field): 7 selections
    query = "{ postList { ...F ...F } } fragment F on Post { a: id user { id } }"
    assert await run(api, query) == {"data": {"postList": [{"a": await first_post_id(api), "user": None}]}}
    response = await api.post("/graphql", {"query": query.replace("...F ...F", "...F ...F __typename")})
    assert (response.status, response.json) == (400, {"message": "The query selects more than 7 fields."})


async def first_post_id(api) -> str:
    return (await run(api, "{ postList { id } }"))["data"]["postList"][0]["id"]


async def test_ten_fragments_each_spreading_the_next_four_times_are_refused_quickly_every_time(api):
    query = fragment_bomb(10)
    assert len(query) < 520
    for _ in range(2):  # resent: the refusal is remembered with the text
        response, cpu = await work(api.post("/graphql", {"query": query}))
        assert (response.status, response.json) == (400, TOO_MANY_SELECTIONS)
        assert cpu < REFUSAL_CPU


async def test_a_long_chain_of_fragments_is_refused_as_too_deep_not_a_server_error(api):
    query = fragment_chain(95)  # 190 levels in 1,900 tokens
    response, cpu = await work(api.post("/graphql", {"query": query}))
    assert (response.status, response.json) == (
        200, refused("The query is deeper than 10 levels.", "QUERY_TOO_DEEP"))
    assert cpu < REFUSAL_CPU


async def test_depth_and_cost_through_fragments_are_those_of_the_expanded_query(api):
    # Two lists of `first` posts, each costing (itself + id + title): 600 for 100, 6000 for 1000.
    query = ("query($n: Int) { a: postList(first: $n) { ...P } b: postList(first: $n) { ...P } } "
             "fragment P on Post { ...Q } fragment Q on Post { id title }")
    assert await run(api, query, {"n": 100}) == {"data": {"a": [], "b": []}}
    assert await run(api, query, {"n": 1000}) == refused("The query costs 6000, more than the limit of 5000.",
                                                         "QUERY_TOO_COSTLY")


# -- the event loop is not held ---------------------------------------------------------------------

async def under_attack(api, attack: Callable[[int], Awaitable[Any]], attackers: int = 4,
                       rounds: int = 3) -> tuple[list[Any], list[float]]:
    """Runs `attackers` clients sending `rounds` attacks each, and plain reads (GET /api/restify/posts)
    one after another until they are done; returns the attack responses and, for each read, the CPU
    seconds the event loop spent while it waited (`loop_work`)."""
    async def attacker(n: int) -> list[Any]:
        return [await attack(n * rounds + r) for r in range(rounds)]

    tasks = [asyncio.ensure_future(attacker(n)) for n in range(attackers)]
    held: list[float] = []
    while not all(task.done() for task in tasks) or not held:
        response, cpu = await loop_work(api.get("/api/restify/posts"))
        assert response.status == 200
        held.append(cpu)
    return [response for task in tasks for response in task.result()], held


def fragment_bombs(api, n: int) -> Awaitable:
    return api.post("/graphql", {"query": fragment_bomb(10 + n % 2)})  # ten and eleven levels


def alias_floods(api, n: int) -> Awaitable:
    return api.request("POST", "/graphql", body=FLOOD, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("send, expected", [(fragment_bombs, (400, TOO_MANY_SELECTIONS)),
                                            (alias_floods, (413, TOO_LARGE))], ids=["fragment-bombs", "alias-floods"])
async def test_attacks_in_parallel_are_refused_quickly_and_do_not_hold_up_plain_requests(api, send, expected):
    async def attack(n: int) -> Any:
        response, cpu = await loop_work(send(api, n))
        assert cpu < LOOP_CPU
        return response.status, response.json
    responses, held = await under_attack(api, attack)
    assert responses == [expected] * 12
    assert max(held) < LOOP_CPU, held


@pytest.mark.parametrize("document, expected", [
    (overlapping_fields, {"data": {"postList": []}}),
    (unused_fragment, {"errors": [{"message": "Fragment 'F' is never used.", "locations": [{"line": 1, "column": 25}],
                                   "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}),
], ids=["same-named-fields", "in-a-fragment-never-spread"])
async def test_slow_validation_of_documents_within_the_limits_does_not_hold_up_plain_requests(api, document, expected):
    async def attack(n: int) -> Any:  # a new text each time: nothing comes from the cache
        response = await api.post("/graphql", {"query": document(str(n))})
        return response.status, response.json
    # Validated in another process: on the loop, or in a thread holding the interpreter lock, validation
    # would slow every request meanwhile.
    alone, cpu = await work(attack(9))
    assert alone == (200, expected) and cpu < PARSE_CPU, cpu
    responses, held = await under_attack(api, attack, attackers=2, rounds=1)
    assert responses == [(200, expected)] * 2
    assert max(held) < LOOP_CPU, held
