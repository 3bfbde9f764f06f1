"""`related` / `include` over HTTP: BelongsTo, HasMany and
BelongsToMany, dotted paths, the relatablePerPage cap, eager relations, and the number of
database reads, counted with the pymongo command listener attached to the test's database.
"""
from dataclasses import dataclass
from typing import Any

import pytest

from tests.http.test_index_queries import (  # noqa: F401  (config and registry are fixtures)
    POSTS, STAMP_JSON, add_line, bad_request, config, registry, seed, seed_post, url,
)
from tests.servers import EMBEDDED_SHAPES, NO_OBJECT_ID_IN_AGGREGATE, keys_read

EAGER_COMMENTS = [add_line("models.py", "class Post(Model):\n", '    eager = ("comments",)')]
AUTH_READS = [("find", "personal_access_tokens"), ("find", "users")]  # resolving a bearer token


def show_url(post_id: str, **params: Any) -> str:
    return url(f"{POSTS}/{post_id}", **params)


def stamped(attributes: dict[str, Any]) -> dict[str, Any]:
    return {**attributes, "created_at": STAMP_JSON, "updated_at": STAMP_JSON}


def user_object(id: str, name: str, post_count: int = 1) -> dict[str, Any]:
    # as another user sees them: a user's email is that user's alone; the posts are counted
    attributes = {"name": name, "bio": None, "avatar": None, "post_count": post_count}
    return {"id": id, "type": "users", "attributes": stamped(attributes)}


def comment_object(id: str, body: str, post_id: str, user_id: str) -> dict[str, Any]:
    attributes = {"body": body, "post_id": post_id, "user_id": user_id, "deleted_at": None}
    return {"id": id, "type": "comments", "attributes": stamped(attributes)}


def tag_object(id: str, name: str) -> dict[str, Any]:
    return {"id": id, "type": "tags", "attributes": stamped({"name": name})}


def post_object(id: str, title: str, user_id: str) -> dict[str, Any]:
    attributes = {"title": title, "body": None, "views": 0, "published": False, "user_id": user_id, "cover": None}
    return {"id": id, "type": "posts", "attributes": stamped(attributes)}


def nested(item: dict[str, Any], **relationships: list[dict[str, Any]]) -> dict[str, Any]:
    return {**item, "relationships": relationships}


async def get_ok(api, path: str, token: str | None = None) -> Any:
    response = await api.get(path, token=token)
    assert response.status == 200, response.body
    return response.json


async def relationships_on(api, door: str, post_id: str, token: str | None = None, **params: Any) -> dict:
    """The relationships of one post, read through show or through index."""
    if door == "show":
        return (await get_ok(api, show_url(post_id, **params), token))["data"]["relationships"]
    rows = (await get_ok(api, url(POSTS, **params), token))["data"]
    return next(row for row in rows if row["id"] == post_id)["relationships"]


@dataclass
class Blog:
    bob: dict[str, Any]       # user objects as the API shows them
    carol: dict[str, Any]
    first: str                # Bob's post: two comments, tags [tech, news]
    second: str               # Carol's post: one comment by Bob, no tags
    comments: list[dict[str, Any]]
    tags: dict[str, dict[str, Any]]
    viewer: str               # a logged-in user's token


async def seed_user(db, name: str) -> dict[str, Any]:
    # Stored the way /api/register stores users, plus a key the repository does not declare.
    id = await seed(db, "users", name=name, email=f"{name.lower()}@example.com", password="$argon2id$hash",
                    remember_token="secret")
    return user_object(id, name)


async def make_blog(api, db) -> Blog:
    viewer = await api.register("Viewer")
    bob, carol = await seed_user(db, "Bob"), await seed_user(db, "Carol")
    tags = {name: tag_object(await seed(db, "tags", name=name), name) for name in ("news", "tech", "misc")}
    first = await seed_post(db, "First", user_id=bob["id"], tag_ids=[tags["tech"]["id"], tags["news"]["id"]])
    second = await seed_post(db, "Second", user_id=carol["id"])
    comments = []
    for body, post, author in (("Nice", first, carol), ("Thanks", first, bob), ("Hi", second, bob)):
        comment_id = await seed(db, "comments", body=body, post_id=post, user_id=author["id"])
        comments.append(comment_object(comment_id, body, post, author["id"]))
    return Blog(bob, carol, first, second, comments, tags, viewer["token"])


# -- the three kinds, through each repository ---------------------------------------------------

@pytest.mark.parametrize("door", ["show", "index"])
@pytest.mark.parametrize("alias", ["related", "include"])
async def test_related_loads_each_kind_serialized_through_its_own_repository(api, db, door, alias):
    blog = await make_blog(api, db)
    found = await relationships_on(api, door, blog.first, blog.viewer, **{alias: "user,comments,tags"})
    assert found == {
        "user": [blog.bob],                                      # no password, no undeclared keys
        "comments": blog.comments[:2],
        "tags": [blog.tags["tech"], blog.tags["news"]],          # in the order of tag_ids
    }


@pytest.mark.parametrize("door", ["show", "index"])
async def test_related_records_go_through_their_own_show_policy(api, db, door):
    blog = await make_blog(api, db)
    # The demo UserPolicy shows users to logged-in users only.
    assert await relationships_on(api, door, blog.first, related="user,tags") == {
        "user": [], "tags": [blog.tags["tech"], blog.tags["news"]],
    }


async def test_relationships_are_absent_without_related(api, db):
    blog = await make_blog(api, db)
    assert "relationships" not in (await get_ok(api, show_url(blog.first)))["data"]
    assert all("relationships" not in row for row in (await get_ok(api, POSTS))["data"])


@pytest.mark.parametrize("door", ["show", "index"])
@pytest.mark.parametrize("related, named", [
    ("nope", "nope (the relations of posts: comments, tags, user)"),
    ("user,nope", "nope (the relations of posts: comments, tags, user)"),
    ("user.nope", "user.nope (the relations of users: posts)"),  # the choices where the path went wrong
    ("zzz,nope", "nope, zzz (the relations of posts: comments, tags, user)"),
    ("nope,user.nope", "nope, user.nope (the relations of posts: comments, tags, user; the relations of users: posts)"),
])
async def test_an_unknown_relation_is_a_400_naming_it_and_the_relations(api, db, door, related, named):
    blog = await make_blog(api, db)
    path = show_url(blog.first, related=related) if door == "show" else url(POSTS, related=related)
    message = f"Unknown relations: {named}."
    bad_request(await api.get(path), message, {"related": [message]})


# -- dotted paths on index ----------------------------------------------------------------------

async def test_a_dotted_path_nests_relationships_of_the_related_records(api, db):
    blog = await make_blog(api, db)
    rows = (await get_ok(api, url(POSTS, related="user.posts"), blog.viewer))["data"]
    first = post_object(blog.first, "First", blog.bob["id"])
    second = post_object(blog.second, "Second", blog.carol["id"])
    assert [row["relationships"] for row in rows] == [
        {"user": [nested(blog.bob, posts=[first])]},
        {"user": [nested(blog.carol, posts=[second])]},
    ]


@pytest.mark.parametrize("viewer", [True, False], ids=["user", "guest"])
async def test_a_dotted_path_through_has_many_nests_each_item(api, db, viewer):
    blog = await make_blog(api, db)
    rows = (await get_ok(api, url(POSTS, related="comments.user"), blog.viewer if viewer else None))["data"]

    def author(comment: dict[str, Any]) -> list[dict[str, Any]]:
        if not viewer:
            return []
        return [blog.bob if comment["attributes"]["user_id"] == blog.bob["id"] else blog.carol]

    assert [row["relationships"] for row in rows] == [
        {"comments": [nested(c, user=author(c)) for c in blog.comments[:2]]},
        {"comments": [nested(blog.comments[2], user=author(blog.comments[2]))]},
    ]


# -- the relatablePerPage cap on show, none on index, eager relations -------------------------

async def busy_post(db, size: int = 20) -> tuple[str, list[str], list[str]]:
    """A post with `size` comments and `size` tags (tag_ids in reverse order of storage)."""
    tags = [await seed(db, "tags", name=f"t{i}") for i in range(size)][::-1]
    post = await seed_post(db, "Busy", tag_ids=tags)
    comments = [await seed(db, "comments", body=f"c{i}", post_id=post, user_id=None) for i in range(size)]
    return post, comments, tags


def related_ids(relationships: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    return {name: [item["id"] for item in items] for name, items in relationships.items()}


@pytest.mark.parametrize("params, size", [({}, 15), ({"relatablePerPage": 5}, 5), ({"relatablePerPage": 30}, 20)],
                         ids=["default", "five", "above-count"])
async def test_show_caps_each_to_many_relation_at_relatable_per_page(api, db, params, size):
    post, comments, tags = await busy_post(db)
    found = await relationships_on(api, "show", post, related="comments,tags", **params)
    assert related_ids(found) == {"comments": comments[:size], "tags": tags[:size]}


@pytest.mark.parametrize("params", [{}, {"relatablePerPage": 5}], ids=["default", "five"])
async def test_index_loads_related_uncapped(api, db, params):
    post, comments, tags = await busy_post(db)
    found = await relationships_on(api, "index", post, related="comments,tags", **params)
    assert related_ids(found) == {"comments": comments, "tags": tags}


@pytest.mark.parametrize("registry", [EAGER_COMMENTS], indirect=True)
@pytest.mark.parametrize("params, tags_shown", [
    ({}, None), ({"relatablePerPage": 5}, None), ({"related": "tags", "relatablePerPage": 5}, 5),
    ({"related": "comments", "relatablePerPage": 5}, None),
], ids=["plain", "capped", "with-tags", "named-too"])
async def test_a_relation_the_model_loads_eagerly_is_returned_on_show_uncapped(api, db, params, tags_shown):
    post, comments, tags = await busy_post(db)
    found = (await get_ok(api, show_url(post, **params)))["data"]["relationships"]
    expected = {"comments": comments, **({"tags": tags[:tags_shown]} if tags_shown else {})}
    assert related_ids(found) == expected


EAGER_COMMENT_AUTHORS = [add_line("models.py", "class Comment(Model):\n", '    eager = ("user",)')]
EAGER_BOTH_WAYS = [add_line("models.py", "class User(Model):\n", '    eager = ("posts",)'),
                   add_line("models.py", "class Post(Model):\n", '    eager = ("user",)')]


@pytest.mark.parametrize("registry", [EAGER_COMMENT_AUTHORS], indirect=True)
@pytest.mark.parametrize("door", ["show", "index"])
async def test_related_records_bring_their_own_eager_relations(api, db, commands, door):
    blog = await make_blog(api, db)
    commands.reset()
    found = await relationships_on(api, door, blog.first, blog.viewer, related="comments")
    authors = {blog.bob["id"]: blog.bob, blog.carol["id"]: blog.carol}
    assert found == {"comments": [nested(c, user=[authors[c["attributes"]["user_id"]]]) for c in blog.comments[:2]]}
    # Still one read per relation per level: the comments, then their authors (and their posts counted).
    assert commands.reads()[-3:] == [("find", "comments"), ("find", "users"), ("aggregate", "posts")]


@pytest.mark.parametrize("registry", [EAGER_BOTH_WAYS], indirect=True)
async def test_eager_relations_that_lead_back_stop_at_the_model_already_loaded(api, db):
    blog = await make_blog(api, db)
    # Post.eager user, User.eager posts: the post's user comes without posts (Post is above it) ...
    shown = (await get_ok(api, show_url(blog.first), blog.viewer))["data"]
    assert shown["relationships"] == {"user": [blog.bob]}
    # ... and a user's posts come without their user (User is above them).
    profile = await get_ok(api, url(f"{POSTS.rsplit('/', 1)[0]}/users/{blog.bob['id']}"), blog.viewer)
    assert profile["data"]["relationships"] == {"posts": [post_object(blog.first, "First", blog.bob["id"])]}


# -- counting reads -----------------------------------------------------------------------------

async def seed_busy_blog(db) -> list[str]:
    """30 posts by 3 users, each with 2 comments and 3 of 5 tags; returns the post ids."""
    users = [await seed(db, "users", name=f"u{i}", email=f"u{i}@example.com", password="x") for i in range(3)]
    tags = [await seed(db, "tags", name=f"t{i}") for i in range(5)]
    posts = []
    for i in range(30):
        tag_ids = [tags[(i + k) % 5] for k in range(3)]
        posts.append(await seed_post(db, f"p{i}", user_id=users[i % 3], tag_ids=tag_ids))
        for k in range(2):
            await seed(db, "comments", body=f"c{i}.{k}", post_id=posts[-1], user_id=users[k])
    return posts


async def reads_for(api, commands, path: str, token: str | None = None) -> list[tuple[str, str]]:
    commands.reset()
    await get_ok(api, path, token)
    return commands.reads()


INDEX = [("find", "posts"), ("count", "posts")]


@pytest.mark.parametrize("per_page", [3, 30])
@pytest.mark.parametrize("related, logged_in, expected", [
    ("user,comments,tags", True, AUTH_READS + INDEX + [("find", "users"), ("aggregate", "posts"), ("find", "comments"), ("find", "tags")]),
    ("comments.user", True, AUTH_READS + INDEX + [("find", "comments"), ("find", "users"), ("aggregate", "posts")]),
    ("user.posts", True, AUTH_READS + INDEX + [("find", "users"), ("aggregate", "posts"), ("find", "posts")]),
    ("comments.user,tags", True, AUTH_READS + INDEX + [("find", "comments"), ("find", "users"), ("aggregate", "posts"), ("find", "tags")]),
    ("comments.user.posts", True, AUTH_READS + INDEX + [("find", "comments"), ("find", "users"), ("aggregate", "posts"), ("find", "posts")]),
    # The users scope reads nothing for guests: their relation costs no query at all.
    ("user,comments,tags", False, INDEX + [("find", "comments"), ("find", "tags")]),
    ("comments.user", False, INDEX + [("find", "comments")]),
])
async def test_index_runs_one_read_per_relation_per_level_whatever_the_page_size(
        api, db, commands, per_page, related, logged_in, expected):
    await seed_busy_blog(db)
    token = (await api.register("Viewer"))["token"] if logged_in else None
    path = url(POSTS, related=related, perPage=per_page)
    assert await reads_for(api, commands, path, token) == expected
    rows = (await get_ok(api, path, token))["data"]
    assert len(rows) == per_page and all(row["relationships"] for row in rows)


@pytest.mark.parametrize("per_page, comments_each, related, expected", [
    (3, 4, "comments", INDEX + [("find", "comments")]),
    (30, 4, "comments", INDEX + [("find", "comments")]),  # 120 comments: more than a default first batch
    (100, 0, "", INDEX),
    (150, 0, "", INDEX),
], ids=["3x4-comments", "30x4-comments", "page-of-100", "page-of-150"])
async def test_reads_do_not_grow_when_a_result_outgrows_the_first_batch(
        api, db, commands, per_page, comments_each, related, expected):
    for i in range(per_page):
        post = await seed_post(db, f"p{i}")
        for k in range(comments_each):
            await seed(db, "comments", body=f"c{i}.{k}", post_id=post, user_id=None)
    path = url(POSTS, perPage=per_page, **({"related": related} if related else {}))
    assert await reads_for(api, commands, path) == expected


async def test_show_runs_one_read_plus_one_per_relation(api, db, commands):
    post = (await seed_busy_blog(db))[0]
    token = (await api.register("Viewer"))["token"]
    expected = AUTH_READS + [("find", "posts"), ("find", "users"), ("aggregate", "posts"), ("find", "comments"), ("find", "tags")]
    assert await reads_for(api, commands, show_url(post, related="user,comments,tags"), token) == expected


# -- the related policy's scope, inside every relation load ----------------------------------------
from service import any_of  # noqa: E402
from tests.policy_rules import own_scope, published_or_own_scope, rules  # noqa: E402,F401

USERS = POSTS.rsplit("/", 1)[0] + "/users"
COMMENTS = POSTS.rsplit("/", 1)[0] + "/comments"
PROFILE = POSTS.rsplit("/", 1)[0] + "/profile"


@dataclass
class Thread:
    post: str                 # Ann's post, with one comment by Ann and one by Bob
    by_ann: str
    by_bob: str


async def make_thread(api, ann, bob) -> Thread:
    post = (await api.post(POSTS, {"title": "Thread", "published": True}, token=ann["token"])).json["data"]["id"]
    ids = []
    for who, body in ((ann, "Ann's"), (bob, "Bob's")):
        response = await api.post(COMMENTS, {"body": body, "post_id": post}, token=who["token"])
        ids.append(response.json["data"]["id"])
    return Thread(post, *ids)


def ids_of(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


@pytest.mark.parametrize("door", ["show", "index"])
async def test_has_many_carries_the_related_scope(api, rules, ann, bob, door):
    thread = await make_thread(api, ann, bob)
    rules("comments", scope=own_scope)
    for who, expected in ((ann, [thread.by_ann]), (bob, [thread.by_bob]), (None, [])):
        found = await relationships_on(api, door, thread.post, who and who["token"], related="comments")
        assert ids_of(found["comments"]) == expected


@pytest.mark.parametrize("door", ["show", "index"])
async def test_an_eager_relation_carries_the_related_scope(api, rules, registry, monkeypatch, ann, bob, door):
    thread = await make_thread(api, ann, bob)
    rules("comments", scope=own_scope)
    monkeypatch.setattr(registry.get("posts").model, "eager", ("comments",))
    found = await relationships_on(api, door, thread.post, bob["token"])
    assert ids_of(found["comments"]) == [thread.by_bob]


@pytest.mark.parametrize("path", [f"{USERS}?related=posts.comments", "{users}/{ann}?related=posts.comments",
                                  f"{PROFILE}?include=posts.comments"], ids=["index", "show", "profile"])
async def test_a_nested_relation_carries_the_related_scope(api, rules, ann, bob, path):
    thread = await make_thread(api, ann, bob)
    rules("comments", scope=own_scope)
    token = ann["token"] if "profile" in path else bob["token"]
    body = await get_ok(api, path.format(users=USERS, ann=ann["id"]), token)
    data = body if "profile" in path else body["data"]
    owner = next(row for row in data if row["id"] == ann["id"]) if isinstance(data, list) else data
    (post,) = owner["relationships"]["posts"]
    assert ids_of(post["relationships"]["comments"]) == [thread.by_ann if "profile" in path else thread.by_bob]


@pytest.mark.parametrize("door", ["show", "index"])
async def test_belongs_to_carries_the_related_scope(api, rules, ann, bob, door):
    draft = (await api.post(POSTS, {"title": "Draft"}, token=ann["token"])).json["data"]["id"]
    comment = (await api.post(COMMENTS, {"body": "Note", "post_id": draft}, token=ann["token"])).json["data"]["id"]
    rules("posts", scope=published_or_own_scope)
    for who, expected in ((ann, [draft]), (bob, []), (None, [])):
        token = who and who["token"]
        if door == "show":
            found = (await get_ok(api, url(f"{COMMENTS}/{comment}", related="post"), token))["data"]
        else:
            found = next(row for row in (await get_ok(api, url(COMMENTS, related="post"), token))["data"]
                         if row["id"] == comment)
        assert ids_of(found["relationships"]["post"]) == expected


@pytest.mark.parametrize("door", ["show", "index"])
async def test_belongs_to_many_carries_the_related_scope(api, db, rules, ann, door):
    tags = {name: await seed(db, "tags", name=name) for name in ("public", "internal", "open")}
    post = await seed_post(db, "Tagged", tag_ids=[tags["internal"], tags["public"], tags["open"]])
    rules("tags", scope=lambda user: any_of({"name": "public"}, {"name": "open"}))
    found = await relationships_on(api, door, post, ann["token"], related="tags")
    assert ids_of(found["tags"]) == [tags["public"], tags["open"]]


async def test_a_relation_whose_scope_reads_nothing_costs_no_query(api, db, commands, rules, ann, bob):
    thread = await make_thread(api, ann, bob)
    rules("comments", scope=lambda user: False)
    commands.reset()
    found = await relationships_on(api, "show", thread.post, related="comments")
    assert found == {"comments": []}
    assert commands.reads() == [("find", "posts")]


# -- query.max_related_rows: what one request may load -------------------------------------------

def related_cap(value: Any) -> dict[str, Any]:
    return {"query": {"max_related_rows": value}}


def too_many(limit: int) -> str:
    return (f"This request would load more than {limit} related records (query.max_related_rows); "
            "ask for fewer records or relations.")


async def posts_with_comments(db, posts: int, comments_each: int) -> list[str]:
    ids = []
    for i in range(posts):
        ids.append(await seed_post(db, f"p{i}"))
        for k in range(comments_each):
            await seed(db, "comments", body=f"c{i}.{k}", post_id=ids[-1], user_id=None)
    return ids


@pytest.mark.parametrize("config", [related_cap(6)], indirect=True)
@pytest.mark.parametrize("params, allowed", [
    ({"related": "comments"}, True),                               # 3 posts x 2 comments: 6
    ({"related": "comments", "perPage": 2}, True),
    ({"related": "comments,tags"}, False),                          # 6 comments + 1 tag
    ({"related": "comments.post"}, False),                          # 6 comments + 3 posts
], ids=["at-the-limit", "smaller-page", "two-relations", "nested"])
async def test_index_over_max_related_rows_is_a_400_naming_the_limit(api, db, params, allowed):
    tag = await seed(db, "tags", name="t")
    first = (await posts_with_comments(db, 3, 2))[0]
    await db.collection("posts").update(first, {"tag_ids": [tag]})
    response = await api.get(url(POSTS, **params))
    if allowed:
        assert response.status == 200
        return
    bad_request(response, too_many(6), {"related": [too_many(6)]})


@pytest.mark.parametrize("config", [related_cap(5)], indirect=True)
async def test_show_counts_against_max_related_rows_too(api, db):
    (post,) = await posts_with_comments(db, 1, 8)
    assert (await api.get(show_url(post, related="comments", relatablePerPage=5))).status == 200
    bad_request(await api.get(show_url(post, related="comments", relatablePerPage=6)), too_many(5),
                {"related": [too_many(5)]})


@pytest.mark.parametrize("config", [related_cap(None), related_cap(0)], indirect=True, ids=["null", "zero"])
async def test_without_max_related_rows_index_loads_every_related_record(api, db):
    await posts_with_comments(db, 3, 40)
    rows = (await get_ok(api, url(POSTS, related="comments")))["data"]
    assert [len(row["relationships"]["comments"]) for row in rows] == [40, 40, 40]


@pytest.mark.parametrize("config, allowed", [(related_cap(12), True), (related_cap(11), False)], indirect=["config"],
                         ids=["at-the-limit", "over"])
async def test_max_related_rows_counts_a_record_in_every_place_it_is_written(api, db, allowed):
    (post,) = await posts_with_comments(db, 1, 3)
    # Each of the 3 comments carries the post, and each copy of the post its 3 comments: 3 x (1 + 3) = 12
    # rows written, though only 4 are read.
    response = await api.get(url("/api/restify/comments", post_id=post, related="post.comments"))
    if allowed:
        assert [len(row["relationships"]["post"][0]["relationships"]["comments"]) for row in response.json["data"]] \
            == [3, 3, 3]
        return
    bad_request(response, too_many(11), {"related": [too_many(11)]})


@pytest.mark.parametrize("config, allowed", [(related_cap(12), True), (related_cap(11), False)], indirect=["config"],
                         ids=["at-the-limit", "over"])
async def test_a_level_written_in_many_places_is_counted_before_it_is_read(api, db, commands, allowed):
    (post,) = await posts_with_comments(db, 1, 3)
    commands.reset()
    response = await api.get(url("/api/restify/comments", post_id=post, related="post.comments"))
    # The post is written under each of the 3 comments: its comments are counted (3 x 3, and the 2
    # further copies of the post) before they are read; past the cap they are never read, nor is the
    # page whole: first its keys (the comments' ids and post ids), the post, the count of its comments.
    planned = [keys_read("comments"), ("find", "posts"), ("aggregate", "comments")]
    if allowed:
        assert response.status == 200
        # Then as any request: the page, its total, the post, the count, the comments.
        assert commands.reads() == [*planned, ("find", "comments"), ("aggregate", "comments"), ("find", "posts"),
                                    ("aggregate", "comments"), ("find", "comments")]
        return
    bad_request(response, too_many(11), {"related": [too_many(11)]})
    assert commands.reads() == planned
    page = next(command for command in commands.sent if "comments" in (command.get("find"), command.get("aggregate")))
    projection = page["pipeline"][-1]["$project"] if EMBEDDED_SHAPES else page["projection"]
    assert projection == {"_id": 1, "post_id": 1}  # the page's keys, not its records


@pytest.mark.embedded_cannot(NO_OBJECT_ID_IN_AGGREGATE)  # the count of the tags' ids is an aggregate
@pytest.mark.parametrize("config, allowed", [(related_cap(12), True), (related_cap(11), False)], indirect=["config"],
                         ids=["at-the-limit", "over"])
async def test_belongs_to_many_written_in_many_places_is_counted_before_it_is_read(api, db, commands, allowed):
    tags = [await seed(db, "tags", name=f"t{i}") for i in range(3)]
    (post,) = await posts_with_comments(db, 1, 3)
    # A tag id that finds nothing is not counted: 1 post + 3 x 3 tags + 2 more copies of the post.
    await db.collection("posts").update(post, {"tag_ids": [*tags, "5f0000000000000000000000"]})
    commands.reset()
    response = await api.get(url("/api/restify/comments", post_id=post, related="post.tags"))
    planned = [keys_read("comments"), ("find", "posts"), ("aggregate", "tags")]  # the page's keys first
    if allowed:
        assert [len(row["relationships"]["post"][0]["relationships"]["tags"]) for row in response.json["data"]] \
            == [3, 3, 3]
        assert commands.reads() == [*planned, ("find", "comments"), ("aggregate", "comments"), ("find", "posts"),
                                    ("aggregate", "tags"), ("find", "tags")]
        return
    bad_request(response, too_many(11), {"related": [too_many(11)]})
    assert commands.reads() == planned


@pytest.mark.parametrize("config", [related_cap(12)], indirect=True)
async def test_a_level_written_once_is_not_counted_first(api, db, commands):
    await posts_with_comments(db, 3, 2)
    commands.reset()
    await get_ok(api, url(POSTS, related="comments"))
    # The page's records are written once each: the read itself stops one row past the cap.
    assert commands.reads() == [("find", "posts"), ("count", "posts"), ("find", "comments")]
