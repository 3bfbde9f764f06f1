"""The answer's byte budget over REST (`server.max_response_bytes`): counted while the answer is built,
each related record once per place it is written, so a short query whose related records repeat
under every record is refused before it is encoded; answers within the budget are unchanged, and the
count is the answer's exact size.

Budgets here are small, so the attacks stay small: 8 posts of 10,000 characters with `related=user.posts`
write every post again under each post's author (8 x 90 KB), while they load 160 KB.
"""
import pytest

from tests.http.test_index_queries import POSTS, seed, seed_post, url

PREFIX = "/api/restify"
COMMENTS = f"{PREFIX}/comments"
LIMIT = 200_000


def too_large(limit: int) -> dict[str, str]:
    return {"message": f"The answer would be larger than {limit} bytes (server.max_response_bytes); ask for "
                       "fewer related records, fewer fields (fields=) or a smaller perPage."}


def refused(response, limit: int = LIMIT) -> None:
    assert (response.status, response.json) == (400, too_large(limit)), response.body[:300]


@pytest.fixture
def config(config, request):
    """A small budget, or this test's settings when parametrized indirectly."""
    return {**config, "server": {"max_response_bytes": LIMIT}, **getattr(request, "param", {})}


def budget(restify, limit: int | None) -> None:
    """Changes the budget of the requests that follow (settings are read per request)."""
    restify.settings.set("server", "max_response_bytes", limit)


async def posts_of(db, user_id: str, count: int, body: str) -> list[str]:
    return [await seed_post(db, f"Post {n}", body=body, user_id=user_id) for n in range(count)]


async def a_thread(db, comments: int, body: str) -> str:
    """A post with `comments` comments, each of `body`; the post's id."""
    post = await seed_post(db, "Thread", body="p" * 5000)
    for _ in range(comments):
        await seed(db, "comments", body=body, post_id=post, user_id=None)
    return post


# -- the attacks ------------------------------------------------------------------------------------

async def test_a_page_whose_related_records_repeat_under_every_record_is_refused(api, db, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    path = url(POSTS, user_id=ann["id"], perPage=100, related="user.posts")
    refused(await api.get(path, token=ann["token"]))
    # Loaded once, the same records fit: it is their places in the answer that are counted.
    assert (await api.get(url(POSTS, user_id=ann["id"], perPage=100, related="user"), token=ann["token"])).status == 200


async def test_a_guest_repeating_a_thread_under_each_of_its_comments_is_refused(api, db):
    post = await a_thread(db, 20, "c" * 2000)
    refused(await api.get(url(COMMENTS, post_id=post, perPage=100, related="post.comments")))


async def test_show_and_the_profile_are_bounded_too(api, db, ann):
    await posts_of(db, ann["id"], 25, "x" * 10_000)
    refused(await api.get(f"{PREFIX}/users/{ann['id']}?related=posts&relatablePerPage=25", token=ann["token"]))
    refused(await api.get(f"{PREFIX}/profile?related=posts&relatablePerPage=25", token=ann["token"]))
    assert (await api.get(f"{PREFIX}/profile?related=posts&relatablePerPage=15", token=ann["token"])).status == 200


async def test_a_write_answers_within_the_budget_too(api, restify, ann):
    budget(restify, 5000)
    items = [{"title": f"Post {n}", "body": "x" * 2000} for n in range(3)]
    response = await api.post(f"{PREFIX}/posts/bulk", items, token=ann["token"])
    refused(response, 5000)
    # The answer is counted once the records are written: they were (a smaller answer: fewer at once).
    listed = await api.get(url(POSTS, user_id=ann["id"], fields="title"), token=ann["token"])
    assert len(listed.json["data"]) == 3


async def test_fewer_fields_make_the_same_relations_fit(api, db, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    path = url(POSTS, user_id=ann["id"], perPage=100, related="user.posts", **{"fields[posts]": "title,user"})
    response = await api.get(path, token=ann["token"])
    assert response.status == 200
    assert [len(row["relationships"]["user"][0]["relationships"]["posts"]) for row in response.json["data"]] == [8] * 8


# -- answers within the budget ----------------------------------------------------------------------

async def test_answers_within_the_budget_are_the_same_bytes_as_without_one(api, db, restify, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    paths = [url(POSTS, user_id=ann["id"]), url(POSTS, user_id=ann["id"], perPage=1, related="user.posts")]
    within = [(await api.get(path, token=ann["token"])).body for path in paths]
    budget(restify, None)
    assert [(await api.get(path, token=ann["token"])).body for path in paths] == within
    assert 80_000 < len(within[0]) < LIMIT and 90_000 < len(within[1]) < LIMIT


async def a_blog(api, db, ann) -> dict[str, str]:
    """Posts with text in several scripts, comments, a tag and an author with other posts."""
    bob = await api.register("Bob")
    tag = await seed(db, "tags", name="naïve")
    first = await seed_post(db, "Ünïcödé ☕", body="é" * 300 + "\U0001F600" * 50 + '"\\\n', views=3000000000,
                            user_id=ann["id"], tag_ids=[tag])
    await seed_post(db, "Second", body="b" * 500, user_id=ann["id"], published=True)
    await seed_post(db, "Bob's", body=None, user_id=bob["id"])
    for author, body in ((bob["id"], "Nice ✓"), (ann["id"], "Thanks"), (None, "Guest")):
        await seed(db, "comments", body=body, post_id=first, user_id=author)
    return {"first": first}


@pytest.mark.parametrize("params", [
    {},
    {"related": "user.posts"},
    {"related": "comments.post,tags,user", "perPage": 2},
    {"related": "comments.post.comments", "page": 2, "perPage": 2},
    {"related": "user.posts,comments", "fields[users]": "name,posts", "fields[posts]": "title,user"},
    {"fields": "title", "related": "tags"},
    {"count": "none", "cursor": "", "related": "comments"},
], ids=["plain", "nested", "several", "deep", "fieldsets", "fieldset-drops-a-relation", "cursor"])
async def test_an_index_answer_is_counted_to_its_exact_size(api, db, restify, ann, params):
    await a_blog(api, db, ann)
    path = url(POSTS, **params)
    budget(restify, None)
    whole = await api.get(path, token=ann["token"])
    assert whole.status == 200, whole.body
    size = len(whole.body)
    budget(restify, size)
    assert (await api.get(path, token=ann["token"])).body == whole.body
    budget(restify, size - 1)
    refused(await api.get(path, token=ann["token"]), size - 1)


@pytest.mark.parametrize("params", [{}, {"related": "comments.user,tags"}, {"related": "user.posts", "fields": "user"}],
                         ids=["plain", "related", "fieldset"])
async def test_a_show_answer_is_counted_to_its_exact_size(api, db, restify, ann, params):
    blog = await a_blog(api, db, ann)
    path = url(f"{POSTS}/{blog['first']}", **params)
    budget(restify, None)
    size = len((await api.get(path, token=ann["token"])).body)
    budget(restify, size)
    assert (await api.get(path, token=ann["token"])).status == 200
    budget(restify, size - 1)
    refused(await api.get(path, token=ann["token"]), size - 1)


@pytest.mark.parametrize("config", [{"server": {"max_response_bytes": 0}}], indirect=True)
async def test_zero_turns_the_budget_off(api, db, ann):
    await posts_of(db, ann["id"], 8, "x" * 10_000)
    response = await api.get(url(POSTS, user_id=ann["id"], related="user.posts"), token=ann["token"])
    assert response.status == 200 and len(response.body) > 8 * 90_000

