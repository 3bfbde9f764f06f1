"""`<type>Page(first, page, after, before, search, sort, filter, count): <Type>Page!` over real HTTP:
`{ data, meta }` with the REST index's meta, counting, cursor walks through
`after` and `before` that stay exact under inserts, cursor errors, and the cost of a page."""
import pytest

from tests.graphql.test_endpoint import run
from tests.graphql.test_filters import app  # noqa: F401  (a fixture: the schema built in memory)
from tests.http.test_cursors import MATCHABLE, VIEWS, seed_views
from tests.http.test_index_queries import POSTS, config, registry, seed_post, url  # noqa: F401  (fixtures)

PAGE = ("query ($first: Int, $page: Int, $after: String, $before: String, $sort: String, $count: Count, "
        "$filter: PostFilter) { postPage(first: $first, page: $page, after: $after, before: $before, sort: $sort, "
        "count: $count, filter: $filter) { data { title } meta { total currentPage lastPage perPage nextCursor "
        "prevCursor } } }")
INVALID = "The cursor is not valid."
FOREIGN = "The cursor belongs to another query: keep its sort, filters and perPage."


async def page_of(api, **variables) -> dict:
    body = await run(api, PAGE, variables)
    assert "errors" not in body, body
    page = body["data"]["postPage"]
    return {"titles": [post["title"] for post in page["data"]], **page["meta"]}


async def test_a_numbered_page_has_the_rest_meta(api, db):
    await seed_views(db)
    page = await page_of(api, first=3, page=2)
    rest = (await api.get(url(POSTS, perPage=3, page=2))).json["meta"]
    assert page == {"titles": ["p3", "p4", "p5"], "total": 7, "currentPage": 2, "lastPage": 3, "perPage": 3,
                    "nextCursor": rest["next_cursor"], "prevCursor": rest["prev_cursor"]}
    assert page["nextCursor"] and page["prevCursor"]


async def test_count_none_leaves_the_total_and_the_last_page_null(api, db):
    await seed_views(db)
    page = await page_of(api, first=3, count="NONE")
    assert (page["titles"], page["total"], page["lastPage"], page["currentPage"]) == (["p0", "p1", "p2"], None, None, 1)


async def test_cursor_mode_has_no_page_numbers(api, db):
    await seed_views(db)
    page = await page_of(api, first=3, after="")
    assert {k: page[k] for k in ("titles", "total", "currentPage", "lastPage", "perPage", "prevCursor")} == {
        "titles": ["p0", "p1", "p2"], "total": 7, "currentPage": None, "lastPage": None, "perPage": 3,
        "prevCursor": None}


@pytest.mark.parametrize("sort", [None, "-views,title"])
async def test_after_walks_forward_and_before_walks_back_over_the_same_pages(api, db, sort):
    await seed_views(db)
    numbered = [(await page_of(api, first=2, page=n, sort=sort))["titles"] for n in (1, 2, 3, 4)]
    forward, page = [], await page_of(api, first=2, after="", sort=sort)
    while True:
        forward.append(page["titles"])
        if page["nextCursor"] is None:
            break
        page = await page_of(api, first=2, after=page["nextCursor"], sort=sort)
    backward = []
    while True:
        backward.insert(0, page["titles"])
        if page["prevCursor"] is None:
            break
        page = await page_of(api, first=2, before=page["prevCursor"], sort=sort)
    assert forward == backward == numbered
    assert sum(len(titles) for titles in forward) == len(VIEWS)


async def test_a_walk_by_after_neither_repeats_nor_skips_records_under_inserts(api, db):
    for i in range(9):
        await seed_post(db, f"p{i}", views=i % 3)
    seen, step = [], 0
    page = await page_of(api, first=2, after="", sort="-views,title")
    while True:
        seen += page["titles"]
        await seed_post(db, f"early-{step}", views=9)   # sorts before the position: not met
        await seed_post(db, f"late-{step}", views=-1)   # sorts after it: met at the end
        step += 1
        if page["nextCursor"] is None:
            break
        page = await page_of(api, first=2, after=page["nextCursor"], sort="-views,title")
    originals = [title for title in seen if title.startswith("p")]
    assert sorted(originals) == [f"p{i}" for i in range(9)]  # each exactly once
    assert not [title for title in seen if title.startswith("early")]


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_a_cursor_keeps_its_filter(api, db):
    await seed_views(db)
    chosen = {"views": {"gte": 2}}
    first = await page_of(api, first=2, sort="-views", filter=chosen)
    second = await page_of(api, first=2, sort="-views", filter=chosen, after=first["nextCursor"])
    assert (first["titles"], second["titles"], second["total"]) == (["p0", "p2"], ["p6", "p4"], 4)
    body = await run(api, PAGE, {"first": 2, "sort": "-views", "filter": {"views": {"gte": 1}},
                                 "after": first["nextCursor"]})
    assert_bad_request(body, "cursor", FOREIGN)


def assert_bad_request(body: dict, name: str, message: str) -> None:
    assert body["data"] is None
    assert [(e["message"], e["path"], e["extensions"]) for e in body["errors"]] == [
        (message, ["postPage"], {"code": "BAD_REQUEST", "errors": {name: [message]}})]


async def test_after_and_before_take_their_own_cursors(api, db):
    await seed_views(db)
    middle = await page_of(api, first=2, page=2)
    assert_bad_request(await run(api, PAGE, {"after": middle["nextCursor"], "before": middle["prevCursor"]}),
                       "after", "Give after or before, not both.")
    assert_bad_request(await run(api, PAGE, {"first": 2, "after": middle["prevCursor"]}),
                       "after", "after takes a nextCursor; pass a prevCursor to before.")
    assert_bad_request(await run(api, PAGE, {"first": 2, "before": middle["nextCursor"]}),
                       "before", 'before takes a prevCursor; pass a nextCursor (or "") to after.')
    assert_bad_request(await run(api, PAGE, {"first": 2, "before": ""}),
                       "before", 'before takes a prevCursor; pass a nextCursor (or "") to after.')
    assert_bad_request(await run(api, PAGE, {"first": 2, "after": "garbage"}), "cursor", INVALID)
    assert_bad_request(await run(api, PAGE, {"first": 3, "after": middle["nextCursor"]}), "cursor", FOREIGN)


async def test_a_page_costs_first_times_what_it_selects(api):
    body = await run(api, "{ postPage(first: 2000) { data { id title } meta { total } } }")
    assert body["errors"][0]["extensions"] == {"code": "QUERY_TOO_COSTLY"}
    body = await run(api, "{ postPage { data { id title } meta { total } } }")
    assert body == {"data": {"postPage": {"data": [], "meta": {"total": 0}}}}
