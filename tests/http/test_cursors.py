"""Cursor pages over HTTP: keyset walks over any allowed sort,
sealed cursors bound to their query, and walks that stay exact while records come and go."""
import base64
import hashlib
import hmac
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.http.test_index_queries import (  # noqa: F401  (config, registry: fixtures)
    POSTS, bad_request, config, registry, replace, seed_post, titles, url)
from tests.policy_rules import published_or_own_scope, rules  # noqa: F401  (rules: a fixture)

VIEWS = [("p0", 3), ("p1", 1), ("p2", 3), ("p3", None), ("p4", 2), ("p5", 1), ("p6", 3)]
MATCHABLE = [replace("posts.py", 'field("views").numeric()', 'field("views").numeric().matchable()')]
INVALID = "The cursor is not valid."
FOREIGN = "The cursor belongs to another query: keep its sort, filters and perPage."


async def seed_views(db) -> None:
    for title, views in VIEWS:
        await seed_post(db, title, views=views)


def cursor_of(link: str | None) -> str | None:
    return None if link is None else parse_qs(urlsplit(link).query, keep_blank_values=True)["cursor"][0]


async def walk(api, forward: bool = True, **params) -> list[list[str]]:
    """Every page of a cursor walk, following links.next (or, backwards, links.prev from the end)."""
    pages = []
    response = await api.get(url(POSTS, cursor="", **params))
    if not forward:
        while response.json["meta"]["next_cursor"]:
            response = await api.get(url(POSTS, cursor=response.json["meta"]["next_cursor"], **params))
    while True:
        pages.append(titles(response))
        key = "next" if forward else "prev"
        link = response.json["links"][key]
        assert cursor_of(link) == response.json["meta"][f"{key}_cursor"]
        if link is None:
            return pages if forward else pages[::-1]
        response = await api.get(url(POSTS, cursor=cursor_of(link), **params))


@pytest.mark.parametrize("sort", ["", "-id", "views", "-views", "-views,title", "title"])
async def test_a_cursor_walk_gives_every_record_once_in_the_order_of_the_pages(api, db, sort):
    await seed_views(db)
    params = {"perPage": 2, **({"sort": sort} if sort else {})}
    everything = titles(await api.get(url(POSTS, perPage=100, **({"sort": sort} if sort else {}))))
    numbered = [titles(await api.get(url(POSTS, page=n, **params))) for n in (1, 2, 3, 4)]
    assert await walk(api, **params) == numbered == [everything[i:i + 2] for i in range(0, 7, 2)]
    assert await walk(api, forward=False, **params) == numbered


async def test_cursor_mode_meta_and_links(api, db):
    await seed_views(db)
    path = api.client.get_url(POSTS)
    first = await api.get(url(POSTS, perPage=3, cursor=""))
    meta = first.json["meta"]
    assert titles(first) == ["p0", "p1", "p2"]
    assert {k: meta[k] for k in ("current_page", "from", "to", "last_page", "total", "per_page", "prev_cursor")} == {
        "current_page": None, "from": None, "to": None, "last_page": None, "total": 7, "per_page": 3,
        "prev_cursor": None}
    assert first.json["links"] == {"first": f"{path}?perPage=3&cursor=", "last": None, "prev": None,
                                   "next": f"{path}?perPage=3&cursor={meta['next_cursor']}", "path": path}
    second = await api.get(url(POSTS, perPage=3, cursor=meta["next_cursor"], count="none"))
    assert titles(second) == ["p3", "p4", "p5"] and second.json["meta"]["total"] is None
    back = await api.get(url(POSTS, perPage=3, cursor=second.json["meta"]["prev_cursor"], count="none"))
    assert titles(back) == ["p0", "p1", "p2"] and back.json["meta"]["prev_cursor"] is None


async def test_a_numbered_page_carries_the_cursors_of_the_pages_beside_it(api, db):
    await seed_views(db)
    page2 = (await api.get(url(POSTS, perPage=2, page=2))).json["meta"]
    after = await api.get(url(POSTS, perPage=2, cursor=page2["next_cursor"]))
    before = await api.get(url(POSTS, perPage=2, cursor=page2["prev_cursor"]))
    assert (titles(before), titles(after)) == (["p0", "p1"], ["p4", "p5"])


async def test_records_present_for_the_whole_walk_appear_exactly_once(api, db):
    """Inserted and deleted records meanwhile, before and after the position: a page number would
    skip or repeat records here; a cursor neither."""
    ids = [await seed_post(db, f"p{i:02}", views=i % 3) for i in range(12)]
    params = {"perPage": 3, "sort": "-views,title"}
    seen: list[str] = []
    response = await api.get(url(POSTS, cursor="", **params))
    deleted: set[str] = set()
    step = 0
    while True:
        seen += titles(response)
        # Between pages: delete one record already seen and one not seen yet, insert before and after.
        if step < 3:
            for id_ in (ids[step], ids[11 - step]):
                assert await db.collection("posts").delete(id_)
            deleted |= {f"p{i:02}" for i in (step, 11 - step)}
            await seed_post(db, f"new-early-{step}", views=9)
            await seed_post(db, f"new-late-{step}", views=-1)
        step += 1
        cursor = response.json["meta"]["next_cursor"]
        if cursor is None:
            break
        response = await api.get(url(POSTS, cursor=cursor, **params))
    originals = [t for t in seen if t.startswith("p")]
    assert len(originals) == len(set(originals))  # none twice
    present = {f"p{i:02}" for i in range(12)} - deleted
    assert present <= set(originals)              # none of those that stayed is missed
    assert not [t for t in seen if t.startswith("new-early")]  # inserted behind the position: not met


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("changed", [
    {"perPage": 3}, {"sort": "-views"}, {"views[gte]": 2}, {"views": 3}, {"search": "p"},
])
async def test_a_cursor_reused_with_another_query_is_a_400(api, db, changed):
    await seed_views(db)
    params = {"perPage": 2, "sort": "views"}
    cursor = (await api.get(url(POSTS, **params))).json["meta"]["next_cursor"]
    assert titles(await api.get(url(POSTS, cursor=cursor, **params))) == ["p5", "p4"]
    bad_request(await api.get(url(POSTS, cursor=cursor, **{**params, **changed})), FOREIGN, {"cursor": [FOREIGN]})


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_a_cursor_walk_keeps_its_filters(api, db):
    await seed_views(db)
    assert await walk(api, perPage=2, sort="-views", **{"views[gte]": 2}) == [["p0", "p2"], ["p6", "p4"]]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def flipped(cursor: str, at: int) -> str:
    """The cursor with one bit of one byte of its sealed part changed (at: a byte index, may be negative)."""
    raw = bytearray(unb64(cursor[1:]))
    raw[at] ^= 0x01
    return cursor[0] + b64(bytes(raw))


def old_format(secret: str, body: list) -> str:
    """A cursor as they were made before they were sealed: readable JSON, signed with HMAC-SHA256."""
    payload = b64(json.dumps(body, separators=(",", ":")).encode())
    return f"{payload}.{b64(hmac.new(secret.encode(), payload.encode(), hashlib.sha256).digest())}"


@pytest.mark.parametrize("tamper", [
    lambda c: flipped(c, 0),                                          # the nonce
    lambda c: flipped(c, 14),                                         # the sealed position
    lambda c: flipped(c, -1),                                         # the tag
    lambda c: ("p" if c[0] == "n" else "n") + c[1:],                  # the direction
    lambda c: c[:-1],                                                 # cut short
    lambda c: c + "A",
    lambda c: c[0] + b64(unb64(c[1:])[:28]),                          # nonce and tag, no body
    lambda c: "garbage",
    lambda c: "a.b.c",
    lambda c: "n",
    lambda c: "n" + "é" * 40,
    lambda c: old_format("one deployment", ["0123456789abcdef", "n", [3, "0" * 24]]),
], ids=["nonce", "position", "tag", "direction", "short", "long", "empty", "garbage", "dots", "bare", "non-ascii",
        "old-format"])
@pytest.mark.parametrize("config", [{"query": {"cursor_secret": "one deployment"}}], indirect=True)
async def test_a_tampered_forged_or_old_cursor_is_a_400(api, db, tamper):
    await seed_views(db)
    cursor = (await api.get(url(POSTS, perPage=2))).json["meta"]["next_cursor"]
    bad_request(await api.get(url(POSTS, perPage=2, cursor=tamper(cursor))), INVALID, {"cursor": [INVALID]})


async def test_a_cursor_holds_no_readable_sort_value(api, db):
    """Sealed, not only signed: the sort values of the record a page ends at (which a user may be shown
    nothing else of) cannot be read out of its cursors."""
    marker = "marker-title-7f3a9c"
    for title in ("aaa", marker, "zzz"):
        await seed_post(db, title)
    meta = (await api.get(url(POSTS, perPage=2, sort="title"))).json["meta"]
    second = (await api.get(url(POSTS, perPage=1, page=2, sort="title"))).json["meta"]
    for cursor in (meta["next_cursor"], second["next_cursor"], second["prev_cursor"]):
        assert cursor[0] in "np" and set(cursor[1:]) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")  # URL-safe as it is
        raw = unb64(cursor[1:])
        assert marker.encode() not in raw and b"marker" not in raw and b"title" not in raw
        assert len(cursor) < 150  # compact: a position of two values
    assert titles(await api.get(url(POSTS, perPage=2, sort="title", cursor=meta["next_cursor"]))) == ["zzz"]
    # One position of one query is one cursor, however it is reached (a page's answer and ETag stay the same).
    walked = (await api.get(url(POSTS, perPage=2, sort="title", cursor=""))).json["meta"]["next_cursor"]
    assert walked == meta["next_cursor"]


@pytest.mark.parametrize("config", [{"query": {"cursor_secret": "one deployment"}}], indirect=True)
async def test_a_cursor_signed_with_another_secret_is_a_400(api, db, restify):
    await seed_views(db)
    cursor = (await api.get(url(POSTS, perPage=2))).json["meta"]["next_cursor"]
    assert titles(await api.get(url(POSTS, perPage=2, cursor=cursor))) == ["p2", "p3"]
    restify.settings.set("query", "cursor_secret", "another deployment")
    bad_request(await api.get(url(POSTS, perPage=2, cursor=cursor)), INVALID, {"cursor": [INVALID]})


async def test_an_empty_walk_has_no_cursors(api):
    body = (await api.get(url(POSTS, cursor=""))).json
    assert (body["data"], body["meta"]["next_cursor"], body["meta"]["prev_cursor"]) == ([], None, None)
    assert (body["links"]["next"], body["links"]["prev"]) == (None, None)


async def test_a_cursor_walk_and_filters_stay_inside_the_policy_scope(api, db, rules, ann, bob):
    """The read rule is inside the query: a walk neither shows nor counts what the user may not read."""
    rules("posts", scope=published_or_own_scope)
    for i, (user, published) in enumerate([(ann, False), (bob, False), (bob, True), (ann, True), (bob, False)]):
        await seed_post(db, f"p{i}", user_id=user["id"], published=published)
    params = {"perPage": 1, "sort": "-title", "published[ne]": "true"}
    response = await api.get(url(POSTS, cursor="", **params), token=ann["token"])
    seen = []
    while True:
        seen += titles(response)
        assert response.json["meta"]["total"] == 1
        cursor = response.json["meta"]["next_cursor"]
        if cursor is None:
            break
        response = await api.get(url(POSTS, cursor=cursor, **params), token=ann["token"])
    assert seen == ["p0"]
    everyone = await api.get(url(POSTS, **{"user_id[nin]": ann["id"]}), token=ann["token"])
    assert sorted(titles(everyone)) == ["p2"] and everyone.json["meta"]["total"] == 1
