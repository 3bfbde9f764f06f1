"""Search and sort through a BelongsTo relation: the demo's
`posts.user` is searchable and sortable by the author's name, within the users' own read rules."""
import sys

import pytest

from service.core.declarations.registry import load_app
from service.core.kernel.errors import DeclarationError
from tests.http.test_index_queries import bad_request, seed, seed_post
from tests.policy_rules import rules  # noqa: F401  (a fixture)
from tests.servers import EMBEDDED_SHAPES, SUBSTRING_SEARCH

POSTS = "/api/restify/posts"
MISSING_USER = "0123456789abcdef01234567"


@pytest.fixture
def people(db, ann, io_loop):
    """Ann (registered, logged in) and two users stored directly: name -> id."""
    async def make():
        return {"Ann": ann["id"], "Zoe": await seed(db, "users", name="Zoe", email="zoe@example.com"),
                "Bob": await seed(db, "users", name="Bob", email="bob@example.com")}
    return io_loop.run_sync(make)


# (title, author, views): seeded in an order that agrees with neither the names nor the ids
POSTED = [("z1", "Zoe", 5), ("a1", "Ann", 3), ("b1", "Bob", 9), ("o1", None, 1), ("a2", "Ann", 7),
          ("z2", "Zoe", 2), ("m1", "missing", 4), ("b2", "Bob", 1), ("a3", "Ann", 5), ("o2", None, 8)]


@pytest.fixture
def posts(db, people, io_loop):
    async def make():
        ids = {}
        for title, author, views in POSTED:
            user_id = people.get(author, MISSING_USER if author == "missing" else None)
            ids[title] = await seed_post(db, title, views=views, user_id=user_id)
        return ids
    return io_loop.run_sync(make)


async def page(api, token, query):
    response = await api.get(f"{POSTS}?{query}", token=token)
    assert response.status == 200, response.body
    return [row["attributes"]["title"] for row in response.json["data"]], response.json["meta"]


# -- search -------------------------------------------------------------------------------------

async def test_search_matches_the_authors_name_beside_the_own_fields(api, ann, posts):
    titles, meta = await page(api, ann["token"], "search=bo&sort=title")
    assert (titles, meta["total"]) == (["b1", "b2"], 2)
    titles, meta = await page(api, ann["token"], "search=z&sort=title")  # title "z1"/"z2" and author Zoe alike
    assert (titles, meta["total"]) == (["z1", "z2"], 2)
    titles, _ = await page(api, ann["token"], "search=AN&sort=-title")  # case-insensitive, literal
    assert titles == ["a3", "a2", "a1"]
    assert (await page(api, ann["token"], "search=.*"))[0] == []


async def test_search_combines_with_filters_and_pages(api, ann, posts):
    titles, meta = await page(api, ann["token"], "search=ann&sort=-views&perPage=2&page=2")
    assert (titles, meta["total"], meta["last_page"]) == (["a1"], 3, 2)
    titles, _ = await page(api, ann["token"], f"search=ann&user_id={posts and ann['id']}&published=false&sort=title")
    assert titles == ["a1", "a2", "a3"]


async def test_search_never_matches_authors_the_user_may_not_see(api, rules, ann, posts):
    # Guests may not see users at all (the demo's scope): the author's name finds nothing for them.
    assert (await page(api, None, "search=bob"))[0] == []
    assert (await page(api, None, "search=b1"))[0] == ["b1"]
    rules("users", scope=lambda user: {"name": {"ne": "Bob"}})
    assert (await page(api, ann["token"], "search=bob"))[0] == []
    rules("users", scope=lambda user: True, show=lambda user, record: record.name != "Zoe")
    assert (await page(api, ann["token"], "search=zoe"))[0] == []
    assert (await page(api, ann["token"], "search=bob&sort=title"))[0] == ["b1", "b2"]


async def test_search_reading_too_many_authors_is_a_400(api, ann, posts, restify):
    restify.settings.set("query", "max_relation_sort", 1)
    message = "The search reads more than 1 users records (query.max_relation_sort); narrow it down."
    bad_request(await api.get(f"{POSTS}?search=o", token=ann["token"]), message, {"search": [message]})
    assert (await page(api, ann["token"], "search=zoe&sort=title"))[0] == ["z1", "z2"]


# -- sort ----------------------------------------------------------------------------------------

# Ann < Bob < Zoe; each author's posts by id (the seeding order); posts without a visible author last.
BY_NAME = ["a1", "a2", "a3", "b1", "b2", "z1", "z2", "o1", "m1", "o2"]
BY_NAME_DESC = ["z1", "z2", "b1", "b2", "a1", "a2", "a3", "o1", "m1", "o2"]


@pytest.mark.parametrize("sort, expected", [
    ("user.name", BY_NAME),
    ("-user.name", BY_NAME_DESC),
    ("user.name,-views", ["a2", "a3", "a1", "b1", "b2", "z1", "z2", "o2", "m1", "o1"]),
])
async def test_sort_by_the_authors_name_pages_through_every_record_once(api, ann, posts, sort, expected):
    for size in (1, 2, 3, 4, 10, 15):
        walked = []
        for number in range(1, 12):
            titles, meta = await page(api, ann["token"], f"sort={sort}&perPage={size}&page={number}")
            assert meta["total"] == 10 and meta["next_cursor"] is None
            walked += titles
        assert walked == expected, size


async def test_sort_by_the_authors_name_with_filters_and_without_counting(api, ann, posts):
    titles, meta = await page(api, ann["token"], "sort=user.name&user_id[null]=false")
    assert (titles, meta["total"]) == (["a1", "a2", "a3", "b1", "b2", "z1", "z2", "m1"], 8)
    if EMBEDDED_SHAPES:  # MongoDB's shapes search the titles by word: SUBSTRING_SEARCH
        titles, meta = await page(api, ann["token"], "sort=-user.name&search=2&perPage=2&page=2")
        assert (titles, meta["total"]) == (["a2", "o2"], 4)
    titles, meta = await page(api, ann["token"], "sort=user.name&count=none&perPage=4&page=2")
    assert (titles, meta["total"], meta["last_page"]) == (["b2", "z1", "z2", "o1"], None, None)
    response = await api.get(f"{POSTS}?sort=user.name&count=none&perPage=4&page=2", token=ann["token"])
    assert response.json["links"]["next"].endswith("page=3")
    response = await api.get(f"{POSTS}?sort=user.name&count=none&perPage=5&page=2", token=ann["token"])
    assert response.json["links"]["next"] is None


async def test_authors_the_user_may_not_see_sort_with_the_records_of_none(api, rules, ann, posts):
    rules("users", scope=lambda user: {"name": {"ne": "Bob"}})
    assert (await page(api, ann["token"], "sort=user.name&perPage=20"))[0] == \
        ["a1", "a2", "a3", "z1", "z2", "b1", "o1", "m1", "b2", "o2"]
    # guests see no users: every post is "without a visible author", in id order
    assert (await page(api, None, "sort=user.name&perPage=20"))[0] == [t for t, _, _ in POSTED]


@pytest.mark.parametrize("query, name, message", [
    ("sort=user.name&cursor=", "cursor", "A sort by a related field reads pages by number: it cannot be used with cursor."),
    ("sort=user.email", "sort", "The field 'user.email' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."),
    ("sort=tags.name", "sort", "The field 'tags.name' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."),
    ("sort=views,user.name", "sort", "The related field 'user.name' must come first in sort."),
])
async def test_a_relation_sort_refuses_what_it_cannot_do(api, ann, posts, query, name, message):
    bad_request(await api.get(f"{POSTS}?{query}", token=ann["token"]), message, {name: [message]})


async def test_sorting_by_more_authors_than_the_limit_is_a_400(api, ann, posts, restify):
    restify.settings.set("query", "max_relation_sort", 2)
    message = "The sort reads more than 2 users records (query.max_relation_sort); narrow it down."
    bad_request(await api.get(f"{POSTS}?sort=user.name", token=ann["token"]), message, {"sort": [message]})


@pytest.mark.parametrize("declared, message", [
    ('.searchable("password")', "PostRepository.related()['user'].searchable('password'): UserRepository has no "
                                "visible field 'password'"),
    ('.sortable("nope")', "PostRepository.related()['user'].sortable('nope'): UserRepository has no visible "
                          "field 'nope'"),
    ('.filterable("password")', "PostRepository.related()['user'].filterable('password'): UserRepository has no "
                                "visible field 'password'"),
    ('.filterable("nope")', "PostRepository.related()['user'].filterable('nope'): UserRepository has no visible "
                            "field 'nope'"),
])
def test_a_relation_field_that_is_unknown_or_hidden_fails_at_start_up(app_copy, declared, message):
    posts = app_copy / "repositories" / "posts.py"
    posts.write_text(posts.read_text().replace('.searchable("name").sortable("name")', declared))
    try:
        with pytest.raises(DeclarationError) as raised:
            load_app(app_copy)
        assert str(raised.value) == message
    finally:
        sys.path.remove(str(app_copy.resolve()))
        for name in [m for m in sys.modules if m == "repositories" or m.startswith("repositories.")]:
            del sys.modules[name]


@pytest.mark.embedded_shapes(SUBSTRING_SEARCH)
async def test_a_relation_sort_counts_each_authors_matches_through_the_authors_key(api, ann, posts, commands):
    """Each author's posts that match the search are counted on the way to the page. The embedded server
    would test every post for such a count; it reads the author's ids through the `user_id` index
    (tests/storage/test_count_through.py: the same counts on MongoDB's shapes)."""
    commands.reset()
    titles, meta = await page(api, ann["token"], "sort=user.name&search=1&perPage=2&page=2")
    assert (titles, meta["total"]) == (["z1", "o1"], 5)
    counts_beside_a_search = [c for c in commands.sent if c.get("aggregate") == "posts"
                              and {"user_id", "title"} <= set(c["pipeline"][0].get("$match", {}))]
    assert counts_beside_a_search == []
