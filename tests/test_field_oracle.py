"""Fields by policy, the same on every door: a field only Ann may see is in her answers and she may
filter, sort and search by it; for Bob it is absent, a filter or sort naming it is refused as unknown,
search does not look into it, and both count the same records (the field tells no one anything)."""
from collections.abc import Iterator
from typing import Any

import pytest

from service.core.declarations.registry import Registry
from tests.graphql.test_endpoint import run
from tests.mcp.conftest import connect, error, mcp_endpoint, mcp_url, ok  # noqa: F401  (fixtures)

POSTS = "/api/restify/posts"
WORD = "saffron"  # in one post's body only


def _ann(user: Any, record: Any) -> bool:
    return user is not None and user.name == "Ann"


@pytest.fixture
def ann_only(registry: Registry) -> Iterator[None]:
    """`views` and a searchable `body` that only Ann sees. Request it before `api`."""
    repository = registry.get("posts").repository
    declared = type(repository).fields
    changed = {"views": lambda f: f.can_see(_ann), "body": lambda f: f.searchable().can_see(_ann)}
    repository.fields = lambda request: [changed[f.name](f) if f.name in changed else f
                                         for f in declared(repository, request)]
    yield
    del repository.fields


@pytest.fixture
def posts(ann_only, api, io_loop, ann, bob) -> list[str]:
    """Three posts (views 1, 9, 5), oldest first; the second one's body holds WORD."""
    async def write() -> list[str]:
        made = []
        for token, views, body in ((ann["token"], 1, "plain"), (bob["token"], 9, f"some {WORD}"),
                                   (bob["token"], 5, "plain")):
            response = await api.post(POSTS, {"title": "Hello", "body": body, "views": views}, token=token)
            assert response.status == 201, response.body
            made.append(response.json["data"]["id"])
        return made
    return io_loop.run_sync(write)


async def test_rest(posts, api, ann, bob):
    async def get(query: str, token: str) -> Any:
        return await api.get(f"{POSTS}?{query}", token=token)

    shown = (await get("sort=created_at", ann["token"])).json
    assert [(p["attributes"]["views"], p["attributes"]["body"]) for p in shown["data"]] == \
        [(1, "plain"), (9, f"some {WORD}"), (5, "plain")]
    ranked = await get("views[gte]=5&sort=-views", ann["token"])
    assert ranked.status == 200, ranked.json
    assert [p["id"] for p in ranked.json["data"]] == \
        [posts[1], posts[2]]
    assert (await get(f"search={WORD}", ann["token"])).json["meta"]["total"] == 1
    theirs = (await get("sort=created_at", bob["token"])).json
    assert all("views" not in p["attributes"] and "body" not in p["attributes"] for p in theirs["data"])
    assert theirs["meta"]["total"] == shown["meta"]["total"] == 3
    for query in ("views[gte]=5", "sort=-views", "fields=title,views"):
        refused = await get(query, bob["token"])
        assert refused.status == 400 and "views" in refused.json["message"], (query, refused.json)
    assert (await get(f"search={WORD}", bob["token"])).json["meta"]["total"] == 0


async def test_graphql(posts, api, ann, bob):
    page = '{ postPage(filter: %s, sort: "%s", search: "%s") { meta { total } data { id views body } } }'

    async def ask(token: str, filter: str = "{}", sort: str = "created_at", search: str = "") -> Any:
        return await run(api, page % (filter, sort, search), token=token)

    mine = (await ask(ann["token"]))["data"]["postPage"]
    assert [(p["views"], p["body"]) for p in mine["data"]] == [("1", "plain"), ("9", f"some {WORD}"), ("5", "plain")]
    ranked = (await ask(ann["token"], '{views: {gte: "5"}}', "-views"))["data"]["postPage"]["data"]
    assert [p["id"] for p in ranked] == [posts[1], posts[2]]
    assert (await ask(ann["token"], search=WORD))["data"]["postPage"]["meta"]["total"] == 1
    theirs = (await ask(bob["token"]))["data"]["postPage"]
    assert [(p["views"], p["body"]) for p in theirs["data"]] == [(None, None)] * 3
    assert theirs["meta"]["total"] == mine["meta"]["total"] == 3
    for refused in (await ask(bob["token"], '{views: {gte: "5"}}'), await ask(bob["token"], sort="-views")):
        assert refused["errors"][0]["extensions"]["code"] == "BAD_REQUEST" and "views" in refused["errors"][0]["message"]
    assert (await ask(bob["token"], search=WORD))["data"]["postPage"]["meta"]["total"] == 0


async def test_mcp(posts, connect, ann, bob):  # noqa: F811  (a fixture)
    async def index(session: Any, **arguments: Any) -> Any:
        return ok(await session.call_tool("posts-index-tool", {"sort": "created_at", **arguments}))

    async with connect(ann["token"]) as session:
        mine = await index(session)
        ranked = await index(session, filter={"views": {"gte": 5}}, sort="-views")
        found = await index(session, search=WORD)
    assert [(p["attributes"]["views"], p["attributes"]["body"]) for p in mine["data"]] == \
        [(1, "plain"), (9, f"some {WORD}"), (5, "plain")]
    assert [p["id"] for p in ranked["data"]] == [posts[1], posts[2]] and found["meta"]["total"] == 1
    async with connect(bob["token"]) as session:
        theirs = await index(session)
        refusals = [error(await session.call_tool("posts-index-tool", arguments))
                    for arguments in ({"filter": {"views": {"gte": 5}}}, {"sort": "-views"})]
        searched = await index(session, search=WORD)
    assert all("views" not in p["attributes"] and "body" not in p["attributes"] for p in theirs["data"])
    assert theirs["meta"]["total"] == mine["meta"]["total"] == 3
    assert all("views" in refused["message"] for refused in refusals), refusals
    assert searched["meta"]["total"] == 0
