"""GraphQL lists and pages obey the query limits of every door (tests/http/test_expensive_queries.py):
`in` lists of at most `query.max_in_values` values, search texts of at most `query.max_search_length`
characters, and expensive queries that take turns, refused as TOO_MANY_REQUESTS."""
from service.core.reading.admission import admission
from tests.graphql.test_endpoint import run
from tests.http.test_expensive_queries import own_turn

LIST = ("query ($filter: PostFilter, $search: String, $sort: String) "
        "{ postList(filter: $filter, search: $search, sort: $sort) { title } }")
PAGE = "query ($filter: PostFilter) { postPage(filter: $filter) { meta { total } } }"


def refused(body: dict, code: str, message: str, **extensions) -> None:
    assert body["data"] is None
    (error,) = body["errors"]
    assert (error["message"], error["extensions"]) == (message, {"code": code, **extensions})


async def test_an_in_list_over_the_limit_is_a_bad_request_before_any_read(api, commands):
    message = "The filter.views.in filter may not have more than 1000 values (query.max_in_values)."
    commands.reset()
    for query in (LIST, PAGE):
        body = await run(api, query, {"filter": {"views": {"in": list(range(1001))}}})
        refused(body, "BAD_REQUEST", message, errors={"filter.views.in": [message]})
    nin = await run(api, LIST, {"filter": {"user_id": {"nin": [str(n) for n in range(1001)]}}})
    message = "The filter.user_id.nin filter may not have more than 1000 values (query.max_in_values)."
    refused(nin, "BAD_REQUEST", message, errors={"filter.user_id.nin": [message]})
    assert commands.reads() == []
    assert await run(api, LIST, {"filter": {"views": {"in": list(range(1000))}}}) == {"data": {"postList": []}}


async def test_a_search_text_over_the_limit_is_a_bad_request(api, restify):
    message = "The search text may not be longer than 255 characters."
    body = await run(api, LIST, {"search": "s" * 256})
    refused(body, "BAD_REQUEST", message, errors={"search": ["The search may not be greater than 255 characters."]})
    restify.settings.set("query", "max_search_length", 3)
    body = await run(api, "mutation { runPostAction(action: \"publish-posts\", all: true, search: \"abcd\") }")
    assert body["errors"][0]["message"] == "The search text may not be longer than 3 characters."


async def instant(_seconds: float) -> None:
    """The admission's pause before a refusal repeated within its Retry-After, taken at once: the refusals
    are what these tests look at (their pauses: tests/core/test_admission.py)."""


async def test_an_expensive_list_waits_for_its_turn(api, restify, ann):
    admission(restify).sleep = instant
    async with admission(restify).turn(f"user:{ann['id']}", 10, "held"):
        body = await run(api, LIST, {"search": "a"}, token=ann["token"])
        refused(body, "TOO_MANY_REQUESTS", own_turn("a search through related records"))
        body = await run(api, LIST, {"sort": "user.name"}, token=ann["token"])
        refused(body, "TOO_MANY_REQUESTS", own_turn("a sort by user.name"))
        assert await run(api, LIST, {"sort": "-views"}, token=ann["token"]) == {"data": {"postList": []}}
    # a guest's turn is its address's
    async with admission(restify).turn("guest:127.0.0.1", 10, "held"):
        refused(await run(api, LIST, {"search": "a"}), "TOO_MANY_REQUESTS",
                own_turn("a search through related records"))
        assert await run(api, LIST, {"search": "a"}, token=ann["token"]) == {"data": {"postList": []}}
