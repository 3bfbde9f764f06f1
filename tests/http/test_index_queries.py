"""Index queries over HTTP: search, match, sort and pagination.

Records are seeded straight into the test's database, shaped like the demo app stores them;
every assertion is on exact results.
"""
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from bson import ObjectId

from service.core.declarations.registry import load_app
from storage.ids import new_id
from tests.servers import SUBSTRING_SEARCH

ROOT = Path(__file__).resolve().parents[2]
POSTS = "/api/restify/posts"
USERS = "/api/restify/users"
STAMP = "2024-01-02T03:04:05.000Z"  # created_at/updated_at as operations.now() stores them
STAMP_JSON = STAMP                  # ... and as the API shows them
NO_CAP_VALUES = [None, 0, "", -5, "abc"]


# -- shared helpers (imported by other test modules) --------------------------------------------

def url(path: str, **params: Any) -> str:
    return f"{path}?{urlencode(params)}" if params else path


async def seed(db, collection: str, **values: Any) -> str:
    """Inserts one record with the demo app's timestamps; returns its id."""
    stored = await db.collection(collection).insert({"created_at": STAMP, "updated_at": STAMP, **values})
    return stored["id"]


async def seed_post(db, title: str, **values: Any) -> str:
    document = {"body": None, "views": 0, "published": False, "user_id": None, "tag_ids": [], **values}
    return await seed(db, "posts", title=title, **document)


async def seed_posts(db, *titles: str, **values: Any) -> list[str]:
    return [await seed_post(db, title, **values) for title in titles]


async def seed_posts_out_of_id_order(db, posts: list[dict[str, Any]]) -> list[str]:
    """Stores `posts` last first, with ids ascending in the order given: so neither the storage
    order nor the natural order of the server agrees with the id order that a tie-break must give."""
    object_ids = [ObjectId() for _ in posts]
    for object_id, post in reversed(list(zip(object_ids, posts, strict=True))):
        await seed_post(db, _id=object_id, **post)
    return [str(object_id) for object_id in object_ids]


def ids(response) -> list[str]:
    assert response.status == 200, response.body
    return [item["id"] for item in response.json["data"]]


def titles(response) -> list[str]:
    assert response.status == 200, response.body
    return [item["attributes"]["title"] for item in response.json["data"]]


def bad_request(response, message: str, errors: dict[str, list[str]] | None = None) -> None:
    assert response.status == 400, response.body
    expected = {"message": message, **({"errors": errors} if errors else {})}
    assert response.json == expected


def cap(value: Any) -> dict[str, Any]:
    return {"pagination": {"max_per_page": value}}


def replace(file: str, old: str, new: str) -> tuple[str, str, str]:
    """An edit for the `registry` fixture: `old` becomes `new` in repositories/<file>."""
    return file, old, new


def add_line(file: str, anchor: str, line: str) -> tuple[str, str, str]:
    """An edit for the `registry` fixture: put `line` right after `anchor` in repositories/<file>."""
    return replace(file, anchor, f"{anchor}{line}\n")


@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's overrides when parametrized indirectly."""
    return {**config, **getattr(request, "param", {})}


@pytest.fixture
def registry(request, tmp_path):
    """The demo app; or, parametrized indirectly with edits, a copy of it changed by them."""
    edits = getattr(request, "param", ())
    if not edits:
        yield load_app(ROOT)
        return
    app_dir = (tmp_path / "app").resolve()
    shutil.copytree(ROOT / "repositories", app_dir / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    for file, old, new in edits:
        source = app_dir / "repositories" / file
        text = source.read_text()
        assert old in text, f"{old!r} is not in {file}"
        source.write_text(text.replace(old, new, 1))
    try:
        yield load_app(app_dir)
    finally:
        # load_app put the copy first on sys.path: later tests must import the real demo app again.
        sys.path.remove(str(app_dir))
        for name in [m for m in sys.modules if m == "repositories" or m.startswith("repositories.")]:
            del sys.modules[name]


# -- search -------------------------------------------------------------------------------------

SEARCHED_TITLES = ["Hello World", "say HELLO", "Regex .* inside", "call (x) now", "x", "a+b=c", "aab",
                   "list[0]", "back\\slash", "^start$", "Goodbye"]


@pytest.mark.parametrize("text, expected", [
    ("hello", ["Hello World", "say HELLO"]),
    ("HeLLo", ["Hello World", "say HELLO"]),
    ("lo wo", ["Hello World"]),
    (".*", ["Regex .* inside"]),
    ("(x)", ["call (x) now"]),
    ("a+b", ["a+b=c"]),
    ("[", ["list[0]"]),
    ("\\", ["back\\slash"]),
    ("^start$", ["^start$"]),
    ("d$", []),  # "Hello World" ends with d: an anchor would match it
    ("body text", []),
])
@pytest.mark.embedded_shapes(SUBSTRING_SEARCH)
async def test_search_matches_searchable_fields_case_insensitively_and_literally(api, db, text, expected):
    await seed_posts(db, *SEARCHED_TITLES, body="body text on every post")
    assert titles(await api.get(url(POSTS, search=text))) == expected


async def test_search_on_users_matches_the_name_only(api, db):
    ann = await api.register("Ann")
    for name, email in (("Joanna", "jo@example.com"), ("Bob", "bob.annex@example.com"), ("ANNE", "e@example.com")):
        await seed(db, "users", name=name, email=email, password="x")
    response = await api.get(url(USERS, search="ann"), token=ann["token"])
    assert response.status == 200
    assert [item["attributes"]["name"] for item in response.json["data"]] == ["Ann", "Joanna", "ANNE"]


async def test_search_with_a_catastrophic_pattern_answers_and_matches_literally(api, db):
    hostile = "(a+)+$"
    # As a regular expression the pattern backtracks 2^40 times over the second title: an answer at all
    # (within the database's timeout) shows it was matched as text.
    await seed_posts(db, "a" * 200 + "!", "a" * 40 + "!", f"literal {hostile} here")
    assert titles(await api.get(url(POSTS, search=hostile))) == ["literal (a+)+$ here"]


@pytest.mark.embedded_shapes(SUBSTRING_SEARCH)
@pytest.mark.parametrize("length, status", [(255, 200), (256, 400)])
async def test_search_text_is_limited_to_255_characters(api, db, length, status):
    await seed_post(db, "a" * 300)
    response = await api.get(url(POSTS, search="a" * length))
    if status == 200:
        assert titles(response) == ["a" * 300]
    else:
        bad_request(response, "The search text may not be longer than 255 characters.",
                    {"search": ["The search may not be greater than 255 characters."]})


# -- match --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("true", ["Yes"]), ("TRUE", ["Yes"]), ("1", ["Yes"]),
    ("false", ["No"]), ("0", ["No"]),
    ("null", ["Null", "Absent"]),
])
async def test_match_coerces_booleans_and_null(api, db, value, expected):
    await seed_post(db, "Yes", published=True)
    await seed_post(db, "No", published=False)
    await seed_post(db, "Null", published=None)
    await seed(db, "posts", title="Absent", views=0)
    assert titles(await api.get(url(POSTS, published=value))) == expected


@pytest.mark.parametrize("sent", [True, "true", 1, "1"])
async def test_match_finds_a_boolean_stored_through_patch(api, db, sent):
    ann = await api.register("Ann")
    other = await seed_post(db, "Other", published=False)
    created = await api.post(POSTS, {"title": "Draft"}, token=ann["token"])
    assert created.status == 201, created.body
    draft = created.json["data"]["id"]
    assert ids(await api.get(url(POSTS, published="false"))) == [other, draft]
    patched = await api.patch(f"{POSTS}/{draft}", {"published": sent}, token=ann["token"])
    assert patched.status == 200 and patched.json["data"]["attributes"]["published"] is True
    for value, expected in (("true", [draft]), ("1", [draft]), ("false", [other]), ("0", [other])):
        assert ids(await api.get(url(POSTS, published=value))) == expected, value


async def test_match_on_user_id_returns_that_users_posts(api, db):
    ann, bob = new_id(), new_id()
    await seed_posts(db, "Ann 1", "Ann 2", user_id=ann)
    await seed_posts(db, "Bob 1", user_id=bob)
    assert titles(await api.get(url(POSTS, user_id=ann))) == ["Ann 1", "Ann 2"]
    assert titles(await api.get(url(POSTS, user_id=bob, published="false"))) == ["Bob 1"]


async def test_match_on_views_is_exact_and_a_malformed_number_is_a_400(api, db):
    await seed_post(db, "Five", views=5)
    await seed_post(db, "Seven", views=7)
    assert titles(await api.get(url(POSTS, views="5"))) == ["Five"]
    response = await api.get(url(POSTS, views="five"))
    assert (response.status, response.json["message"]) == (400, "The views filter must be a number.")


@pytest.mark.parametrize("params", [
    {"title": "Five"}, {"body": "x"}, {"colour": "red"},
], ids=["title", "body", "unknown"])
async def test_match_ignores_fields_that_are_not_matchable_and_unknown_names(api, db, params):
    await seed_post(db, "Five", views=5, body="x")
    await seed_post(db, "Seven", views=7)
    assert titles(await api.get(url(POSTS, **params))) == ["Five", "Seven"]


VIEWS_MATCHABLE = [replace("posts.py", 'field("views").numeric()', 'field("views").numeric().matchable()')]


@pytest.mark.parametrize("registry", [VIEWS_MATCHABLE], indirect=True)
@pytest.mark.parametrize("value, expected", [
    ("5", ["Five"]), ("5.0", ["Five"]), (" 7 ", ["Seven"]), ("2.5", ["Half"]), ("null", ["None"]), ("6", []),
])
async def test_match_coerces_numbers_on_a_matchable_numeric_field(api, db, value, expected):
    for title, views in (("Five", 5), ("Seven", 7), ("Half", 2.5), ("None", None)):
        await seed_post(db, title, views=views)
    assert titles(await api.get(url(POSTS, views=value))) == expected


@pytest.mark.parametrize("registry", [VIEWS_MATCHABLE], indirect=True)
@pytest.mark.parametrize("value", ["abc", "NaN", "1e400", "0x10", "", str(2**63)])
async def test_match_with_a_number_that_cannot_be_coerced_is_a_400(api, db, value):
    message = "The views filter must be a number."
    bad_request(await api.get(url(POSTS, views=value)), message, {"views": [message]})


async def test_match_with_a_value_that_cannot_be_coerced_is_a_400(api, db):
    message = "The published filter must be true or false."
    bad_request(await api.get(url(POSTS, published="maybe")), message, {"published": [message]})


@pytest.mark.parametrize("name", ["user_id[$ne]", "$where", "user_id.$ne", "published[$exists]"])
async def test_match_refuses_operators_in_parameter_names(api, db, name):
    await seed_post(db, "Any")
    bad_request(await api.get(url(POSTS, **{name: "x"})),
                f"The query parameter {name!r} is not allowed: operators cannot be sent in a query.",
                {name: ["Operators are not allowed in query parameters."]})


# -- sort ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("sort, expected", [
    ("-views,title", ["d", "a", "b", "c"]),
    ("views,-title", ["c", "b", "a", "d"]),
    ("title", ["a", "b", "c", "d"]),
    ("-title", ["d", "c", "b", "a"]),
    ("-views", ["d", "b", "a", "c"]),  # the tie on 10 is broken by id: b has the lower id
    ("id", ["b", "a", "c", "d"]),
    ("-id", ["d", "c", "a", "b"]),
])
async def test_sort_by_several_keys_with_minus_for_descending(api, db, sort, expected):
    stored = (("b", 10), ("a", 10), ("c", 5), ("d", 20))
    await seed_posts_out_of_id_order(db, [{"title": title, "views": views} for title, views in stored])
    assert titles(await api.get(url(POSTS, sort=sort))) == expected


@pytest.mark.parametrize("sort, expected", [
    ("-created_at", ["b", "c", "a"]),  # newest first
    ("created_at", ["a", "c", "b"]),
    ("-updated_at", ["a", "c", "b"]),
])
async def test_every_repository_sorts_by_its_timestamps(api, db, sort, expected):
    stamps = {"a": ("2024-01-01T00:00:00.000Z", "2024-03-01T00:00:00.000Z"),
              "b": ("2024-01-03T00:00:00.000Z", "2024-01-03T00:00:00.000Z"),
              "c": ("2024-01-02T00:00:00.000Z", "2024-02-01T00:00:00.000Z")}
    await seed_posts_out_of_id_order(db, [{"title": t, "created_at": c, "updated_at": u} for t, (c, u) in stamps.items()])
    assert titles(await api.get(url(POSTS, sort=sort))) == expected
    first = await api.get(url(POSTS, sort="-created_at", perPage=2, cursor=""))  # cursors page through them too
    following = await api.get(url(POSTS, sort="-created_at", perPage=2, cursor=first.json["meta"]["next_cursor"]))
    assert titles(first) + titles(following) == ["b", "c", "a"]


@pytest.mark.parametrize("sort, named", [
    ("body", "body"), ("-published", "published"), ("title,user_id", "user_id"), ("nope", "nope"),
])
async def test_sort_on_a_field_that_is_not_sortable_is_a_400_naming_it_and_the_sortable_ones(api, db, sort, named):
    message = f"The field '{named}' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."
    bad_request(await api.get(url(POSTS, sort=sort)), message, {"sort": [message]})


@pytest.mark.parametrize("sort", ["views", "-views"])
async def test_paging_through_a_sort_with_ties_yields_every_record_exactly_once(api, db, sort):
    stored = await seed_posts_out_of_id_order(db, [{"title": f"p{i}", "views": i % 2} for i in range(23)])
    pages = [ids(await api.get(url(POSTS, sort=sort, perPage=4, page=page))) for page in range(1, 8)]
    assert [len(page) for page in pages] == [4, 4, 4, 4, 4, 3, 0]
    low, high = stored[0::2], stored[1::2]  # views 0 and 1, each in id order
    assert sum(pages, []) == (low + high if sort == "views" else high + low)


async def test_search_match_and_sort_combine(api, db):
    for title, views, published in (("News b", 1, True), ("News a", 1, True), ("News c", 9, False),
                                    ("Other", 5, True)):
        await seed_post(db, title, views=views, published=published)
    response = await api.get(url(POSTS, search="news", published="true", sort="-views,title"))
    assert titles(response) == ["News a", "News b"]


# -- pagination ---------------------------------------------------------------------------------

@pytest.mark.parametrize("page, expected, first, last, prev, next_", [
    (1, ["p1", "p2", "p3"], 1, 3, None, 2),
    (2, ["p4", "p5", "p6"], 4, 6, 1, 3),
    (3, ["p7"], 7, 7, 2, None),
    (5, [], None, None, 4, None),
], ids=["first", "middle", "last", "beyond"])
async def test_pagination_meta_and_links(api, db, page, expected, first, last, prev, next_):
    await seed_posts(db, *(f"p{i}" for i in range(1, 8)))
    response = await api.get(url(POSTS, perPage=3, page=page))
    assert titles(response) == expected
    path = api.client.get_url(POSTS)

    def link(number: int | None) -> str | None:
        return None if number is None else f"{path}?perPage=3&page={number}"

    meta = response.json["meta"]
    # The cursors of the pages beside a numbered page: null at the ends (tests/http/test_cursors.py walks them).
    assert (meta.pop("prev_cursor") is not None, meta.pop("next_cursor") is not None) == \
        (bool(expected) and prev is not None, next_ is not None)
    assert meta == {"current_page": page, "from": first, "last_page": 3, "path": path,
                    "per_page": 3, "to": last, "total": 7}
    assert response.json["links"] == {"first": link(1), "last": link(3), "prev": link(prev), "next": link(next_),
                                      "path": path}


LAST_SAFE_PAGE = (2**63 - 1) // 15 + 1  # the last page of 15 whose skip still fits in 64 bits


@pytest.mark.parametrize("page, per_page", [
    (LAST_SAFE_PAGE, 15),
    (LAST_SAFE_PAGE + 1, 15),
    (2**63 - 1, 15),
    (3, 2**62),
], ids=["last-safe", "next", "int64-max", "huge-per-page"])
async def test_a_page_far_beyond_the_last_is_an_empty_page_not_a_500(api, db, page, per_page):
    await seed_post(db, "Only")
    response = await api.get(url(POSTS, page=page, perPage=per_page))
    assert response.status == 200, response.body
    assert response.json["data"] == []
    assert response.json["meta"] == {"current_page": page, "from": None, "last_page": 1,
                                     "path": api.client.get_url(POSTS), "per_page": per_page, "to": None, "total": 1,
                                     "next_cursor": None, "prev_cursor": None}


async def test_pagination_defaults_to_page_one_of_fifteen(api, db):
    await seed_posts(db, *(f"p{i}" for i in range(17)))
    response = await api.get(POSTS)
    assert titles(response) == [f"p{i}" for i in range(15)]
    meta = response.json["meta"]
    assert (meta["current_page"], meta["per_page"], meta["last_page"], meta["total"]) == (1, 15, 2, 17)


# 1_0: int() would read Python's digit separator as 10; \u0661 is an Arabic-Indic one.
MALFORMED = ["x", "0", "-1", "1.5", "1_0", "\u0661"]


@pytest.mark.parametrize("name", ["page", "perPage", "relatablePerPage"])
@pytest.mark.parametrize("value", MALFORMED)
async def test_malformed_page_numbers_are_a_400(api, db, name, value):
    await seed_post(db, "Any")
    bad_request(await api.get(url(POSTS, **{name: value})), f"The {name} parameter must be a positive integer.",
                {name: [f"The {name} must be a positive integer."]})


@pytest.mark.parametrize("value", MALFORMED)
async def test_malformed_relatable_per_page_is_a_400(api, db, value):
    post = await seed_post(db, "Any")
    bad_request(await api.get(url(f"{POSTS}/{post}", related="comments", relatablePerPage=value)),
                "The relatablePerPage parameter must be a positive integer.",
                {"relatablePerPage": ["The relatablePerPage must be a positive integer."]})


async def page_size(api, **params: Any) -> tuple[int, int]:
    """(rows returned, meta.per_page) for an index of posts."""
    response = await api.get(url(POSTS, **params))
    assert response.status == 200, response.body
    return len(response.json["data"]), response.json["meta"]["per_page"]


async def relatable_size(api, post_id: str, **params: Any) -> int:
    response = await api.get(url(f"{POSTS}/{post_id}", related="comments", **params))
    assert response.status == 200, response.body
    return len(response.json["data"]["relationships"]["comments"])


async def post_with_comments(db, count: int) -> str:
    post = await seed_post(db, "Commented")
    for i in range(count):
        await seed(db, "comments", body=f"c{i}", post_id=post, user_id=None)
    return post


@pytest.mark.parametrize("config", [cap(5)], indirect=True)
@pytest.mark.parametrize("params, expected", [
    ({"perPage": 50}, (5, 5)), ({}, (5, 5)), ({"perPage": 3}, (3, 3)), ({"perPage": 5}, (5, 5)),
], ids=["larger", "default", "smaller", "equal"])
async def test_max_per_page_clamps_per_page_instead_of_rejecting_it(api, db, params, expected):
    await seed_posts(db, *(f"p{i}" for i in range(8)))
    assert await page_size(api, **params) == expected


@pytest.mark.parametrize("config", [cap(5)], indirect=True)
@pytest.mark.parametrize("params, expected", [
    ({"relatablePerPage": 50}, 5), ({}, 5), ({"relatablePerPage": 2}, 2),
], ids=["larger", "default", "smaller"])
async def test_max_per_page_clamps_relatable_per_page(api, db, params, expected):
    post = await post_with_comments(db, 8)
    assert await relatable_size(api, post, **params) == expected


@pytest.mark.parametrize("registry", [[add_line("posts.py", "class PostRepository(Repository):\n",
                                                "    per_page = 50")]], indirect=True)
@pytest.mark.parametrize("config, expected", [
    (cap(20), (20, 20)), (cap(None), (30, 50)), (cap(100), (30, 50)),
], indirect=["config"], ids=["capped", "no-cap", "cap-above"])
async def test_a_repository_default_per_page_above_the_cap_is_clamped(api, db, config, expected):
    await seed_posts(db, *(f"p{i}" for i in range(30)))
    assert await page_size(api) == expected


@pytest.mark.parametrize("config, limit", [
    *((cap(value), None) for value in NO_CAP_VALUES), (cap(5), 5), (cap("5"), 5),
], indirect=["config"], ids=[*(repr(v) for v in NO_CAP_VALUES), "5", "'5'"])
async def test_max_per_page_caps_only_when_it_is_a_positive_number(api, db, limit):
    post = await post_with_comments(db, 20)
    await seed_posts(db, *(f"p{i}" for i in range(39)))
    rows = 40 if limit is None else limit
    assert await page_size(api, perPage=40) == (rows, rows)
    assert await relatable_size(api, post, relatablePerPage=20) == (20 if limit is None else limit)
