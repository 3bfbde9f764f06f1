"""One aggregation on every door: for two users whose policy scopes differ, REST's `<r>/aggregate`,
GraphQL's `postAggregate` and the MCP aggregate tool each equal the counts and sums made from that
user's own index pages, walked to the end."""
from collections import Counter, defaultdict

import pytest

from tests.graphql.test_endpoint import run
from tests.http.test_index_queries import seed_post
from tests.mcp.conftest import PREFIX, error, ok
from tests.policy_rules import published_or_own_scope, rules  # noqa: F401  (a fixture)

GROUP, METRICS = "user_id,published,created_at:month", "count,sum:views,max:views"
AGGREGATE = ("query ($group: String, $metrics: String, $filter: PostFilter) { postAggregate(group: $group, "
             "metrics: $metrics, filter: $filter) { data { group { user_id published created_at } count sum_views "
             "max_views } meta { groups } } }")


@pytest.fixture
def posts(db, ann, bob, io_loop):
    async def make():
        for n in range(11):
            owner = (ann, bob)[n % 2]
            stamp = f"2024-{n % 3 + 1:02}-{n + 1:02}T08:00:00.000Z"
            await seed_post(db, f"Post {n}", views=n * 3, published=n % 3 == 0, user_id=owner["id"],
                            created_at=stamp, updated_at=stamp)
    io_loop.run_sync(make)


async def walked(api, token: str, query: str = "") -> list[dict]:
    """Every post the user's index lists, two to a page, following `links.next`."""
    records, url = [], f"{PREFIX}/posts?perPage=2{query}"
    while url:
        body = (await api.get(url.removeprefix(api.client.get_url("")).removeprefix("http://127.0.0.1"),
                              token=token)).json
        records += [item["attributes"] for item in body["data"]]
        url = body["links"]["next"]
    return records


def counted(records: list[dict]) -> list[tuple]:
    """(user_id, published, month, count, sum of views, max of views) per group, sorted."""
    counts: Counter = Counter()
    views: dict[tuple, list[int]] = defaultdict(list)
    for record in records:
        key = (record["user_id"], record["published"], record["created_at"][:7])
        counts[key] += 1
        views[key].append(record["views"])
    return sorted((*key, counts[key], sum(views[key]), max(views[key])) for key in counts)


def rows(data: list[dict]) -> list[tuple]:
    return sorted((row["group"]["user_id"], row["group"]["published"], row["group"]["created_at"], row["count"],
                   row["sum_views"], row["max_views"]) for row in data)


async def test_every_door_counts_what_each_users_index_lists(api, connect, rules, posts, ann, bob):
    rules("posts", scope=published_or_own_scope)
    seen = {}
    for user in (ann, bob):
        expected = counted(await walked(api, user["token"]))
        seen[user["id"]] = expected
        rest = (await api.get(f"{PREFIX}/posts/aggregate?group={GROUP}&metrics={METRICS}", token=user["token"])).json
        assert rows(rest["data"]) == expected and rest["meta"] == {"groups": len(expected)}
        graphql = await run(api, AGGREGATE, {"group": GROUP, "metrics": METRICS}, token=user["token"])
        assert "errors" not in graphql, graphql
        assert rows(graphql["data"]["postAggregate"]["data"]) == expected
        async with connect(user["token"]) as session:
            tool = ok(await session.call_tool("posts-aggregate-tool", {"group": GROUP, "metrics": METRICS}))
        assert rows(tool["data"]) == expected
    assert seen[ann["id"]] != seen[bob["id"]]  # the scopes differ, so do the answers


async def filtered_elsewhere(api, connect, token: str, filter: dict) -> tuple[list, list]:
    """The rows of the aggregation with `filter` through GraphQL and through the MCP tool."""
    graphql = await run(api, AGGREGATE, {"group": GROUP, "metrics": METRICS, "filter": filter}, token=token)
    async with connect(token) as session:
        tool = ok(await session.call_tool("posts-aggregate-tool", {"group": GROUP, "metrics": METRICS,
                                                                   "filter": filter}))
    return rows(graphql["data"]["postAggregate"]["data"]), rows(tool["data"])


async def test_a_filter_chooses_the_same_records_on_every_door(api, connect, posts, ann):
    expected = counted(await walked(api, ann["token"], "&views[gte]=9&published=false"))
    filter = {"views": {"gte": 9}, "published": {"eq": False}}
    assert await filtered_elsewhere(api, connect, ann["token"], filter) == (expected, expected)
    async with connect(ann["token"]) as session:
        refused = error(await session.call_tool("posts-aggregate-tool", {"group": "title"}))
    message = "The field 'title' cannot be grouped; the groupable fields are: created_at, published, updated_at, user_id."
    assert refused == {"message": message, "errors": {"group": [message]}}


async def test_graphql_refuses_a_bad_group_naming_it(api, posts, ann):
    body = await run(api, AGGREGATE, {"group": "body", "metrics": "count"}, token=ann["token"])
    assert body["data"] is None and body["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert body["errors"][0]["message"].startswith("The field 'body' cannot be grouped")


async def test_a_filter_through_the_author_counts_what_each_users_index_lists(api, connect, rules, posts, ann, bob):
    # Each user sees only themselves among users: the same filter through the author chooses other posts.
    rules("posts", scope=published_or_own_scope)
    rules("users", scope=lambda user: {"id": user.id} if user is not None else False)
    seen = {}
    for user in (ann, bob):
        expected = counted(await walked(api, user["token"], "&user.name[null]=false"))
        seen[user["id"]] = expected
        rest = (await api.get(f"{PREFIX}/posts/aggregate?group={GROUP}&metrics={METRICS}&user.name[null]=false",
                              token=user["token"])).json
        assert rows(rest["data"]) == expected
        filter = {"user": {"name": {"isNull": False}}}
        assert await filtered_elsewhere(api, connect, user["token"], filter) == (expected, expected)
    assert seen[ann["id"]] and seen[bob["id"]] and seen[ann["id"]] != seen[bob["id"]]
