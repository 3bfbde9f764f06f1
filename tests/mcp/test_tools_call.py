"""tools/call for every demo tool: the same operations, policies, validation and JSON as the REST API."""
from urllib.parse import urlencode

import pytest

from storage import Filter
from tests.mcp.conftest import FORBIDDEN, NOT_FOUND, PREFIX, confirmed, error, ok

INVALID = "The given data was invalid."
PUBLISHED = "The published filter must be true or false."


async def rest(api, path: str, token: str, **params) -> dict:
    response = await api.get(f"{PREFIX}{path}" + (f"?{urlencode(params)}" if params else ""), token=token)
    assert response.status == 200, response.body
    return response.json


async def rest_post(api, name: str, token: str, **values) -> str:
    response = await api.post(f"{PREFIX}/{name}", values, token=token)
    assert response.status == 201, response.body
    return response.json["data"]["id"]


# -- posts: all five -------------------------------------------------------------------------------
async def test_store_creates_a_record_owned_by_the_caller(connect, ann, db, api):
    async with connect(ann["token"]) as session:
        created = ok(await session.call_tool("posts-store-tool", {"title": "Hello", "views": 3, "user_id": "x"}))
    stored = await db.collection("posts").find_by_id(created["data"]["id"])
    assert stored["title"] == "Hello" and stored["views"] == 3
    assert stored["user_id"] == ann["id"]  # set by the server, whatever was sent
    assert created == await rest(api, f"/posts/{created['data']['id']}", ann["token"])


async def test_index_returns_the_rest_envelope_with_search_sort_filter_and_include(connect, ann, bob, api):
    for title, views, published in (("Tornado", 5, True), ("Tornado tips", 9, True), ("Drafts", 1, False)):
        await rest_post(api, "posts", ann["token"], title=title, views=views, published=published)
    await rest_post(api, "posts", bob["token"], title="Tornado by Bob")
    arguments = {"search": "tornado", "sort": "-views", "published": True, "include": "user", "perPage": 1}
    async with connect(ann["token"]) as session:
        listed = ok(await session.call_tool("posts-index-tool", arguments))
    params = {"search": "tornado", "sort": "-views", "published": "true", "include": "user", "perPage": 1}
    assert listed == await rest(api, "/posts", ann["token"], **params)
    assert listed["meta"]["total"] == 2 and listed["meta"]["per_page"] == 1
    assert [p["attributes"]["title"] for p in listed["data"]] == ["Tornado tips"]
    assert listed["data"][0]["relationships"]["user"][0]["id"] == ann["id"]
    assert listed["links"]["next"].endswith("/api/restify/posts?search=tornado&sort=-views&published=true"
                                            "&include=user&perPage=1&page=2")


async def test_index_pages_and_filters_by_null_and_by_user(connect, ann, bob, api):
    for title in ("a", "b", "c"):
        await rest_post(api, "posts", ann["token"], title=title)
    await rest_post(api, "posts", bob["token"], title="d")
    async with connect(ann["token"]) as session:
        page = ok(await session.call_tool("posts-index-tool", {"page": 2, "perPage": 2, "sort": "title"}))
        mine = ok(await session.call_tool("posts-index-tool", {"user_id": ann["id"], "search": None}))
        nobody = ok(await session.call_tool("posts-index-tool", {"user_id": None}))
    assert [p["attributes"]["title"] for p in page["data"]] == ["c", "d"]
    assert page["meta"]["current_page"] == 2 and page["links"]["prev"] is not None
    assert sorted(p["attributes"]["title"] for p in mine["data"]) == ["a", "b", "c"]
    assert nobody["data"] == []


async def test_show_returns_the_record_with_its_relations(connect, ann, api):
    post = await rest_post(api, "posts", ann["token"], title="Hello")
    await rest_post(api, "comments", ann["token"], body="First", post_id=post)
    async with connect(ann["token"]) as session:
        shown = ok(await session.call_tool("posts-show-tool", {"id": post, "include": "comments,user"}))
    assert shown == await rest(api, f"/posts/{post}", ann["token"], include="comments,user")
    assert [c["attributes"]["body"] for c in shown["data"]["relationships"]["comments"]] == ["First"]


async def test_update_changes_only_what_is_sent(connect, ann, db, api):
    post = await rest_post(api, "posts", ann["token"], title="Old", body="Kept", views=2)
    async with connect(ann["token"]) as session:
        updated = ok(await session.call_tool("posts-update-tool", {"id": post, "title": "New"}))
    assert updated["data"]["attributes"]["title"] == "New"
    stored = await db.collection("posts").find_by_id(post)
    assert (stored["title"], stored["body"], stored["views"]) == ("New", "Kept", 2)


async def test_update_of_someone_elses_post_is_denied_and_changes_nothing(connect, ann, bob, db, api):
    post = await rest_post(api, "posts", ann["token"], title="Ann's")
    async with connect(bob["token"]) as session:
        result = await session.call_tool("posts-update-tool", {"id": post, "title": "Bob's now"})
    assert error(result) == FORBIDDEN
    assert (await db.collection("posts").find_by_id(post))["title"] == "Ann's"


async def test_delete_removes_the_record_and_says_so(connect, ann, bob, db, api):
    post = await rest_post(api, "posts", ann["token"], title="Doomed")
    async with connect(bob["token"]) as session:
        assert error(await session.call_tool("posts-delete-tool", {"id": post})) == FORBIDDEN
    assert await db.collection("posts").find_by_id(post) is not None
    async with connect(ann["token"]) as session:
        assert ok(await confirmed(session, "posts-delete-tool", {"id": post})) == {"deleted": True, "id": post}
        assert error(await session.call_tool("posts-delete-tool", {"id": post})) == NOT_FOUND
        assert error(await session.call_tool("posts-show-tool", {"id": post})) == NOT_FOUND
    assert await db.collection("posts").find_by_id(post) is None


# -- errors: the REST bodies ---------------------------------------------------------------------------
async def test_validation_error_is_the_422_body(connect, ann, db):
    async with connect(ann["token"]) as session:
        result = await session.call_tool("posts-store-tool", {"title": "x" * 256, "views": -1, "published": "maybe"})
    assert error(result) == {"message": INVALID, "errors": {
        "title": ["The title may not be greater than 255 characters."],
        "views": ["The views must be at least 0."],
        "published": ["The published field must be true or false."],
    }}
    assert await db.collection("posts").count(Filter()) == 0


async def test_missing_required_attributes_are_reported_like_rest(connect, ann, api):
    async with connect(ann["token"]) as session:
        result = await session.call_tool("comments-store-tool", {"body": ""})
    response = await api.post(f"{PREFIX}/comments", {"body": ""}, token=ann["token"])
    assert response.status == 422
    assert error(result) == response.json == {"message": INVALID, "errors": {
        "body": ["The body field is required."], "post_id": ["The post id field is required."]}}


@pytest.mark.parametrize("tool, arguments, expected", [
    ("posts-index-tool", {"page": 0}, {"message": "The page parameter must be a positive integer.",
                                       "errors": {"page": ["The page must be a positive integer."]}}),
    ("posts-index-tool", {"sort": "body"}, {
        "message": "The field 'body' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views.",
        "errors": {"sort": ["The field 'body' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."]}}),
    ("posts-index-tool", {"include": "friends"}, {
        "message": "Unknown relations: friends (the relations of posts: comments, tags, user).",
        "errors": {"related": ["Unknown relations: friends (the relations of posts: comments, tags, user)."]}}),
    ("posts-index-tool", {"published": "maybe"}, {"message": PUBLISHED, "errors": {"published": [PUBLISHED]}}),
    ("posts-show-tool", {"id": "000000000000000000000000"}, NOT_FOUND),
    ("posts-show-tool", {"id": "not-an-id"}, NOT_FOUND),
    ("users-profile-tool", {"include": "posts,friends"}, {
        "message": "Unknown relations: friends (the relations of users: posts).",
        "errors": {"related": ["Unknown relations: friends (the relations of users: posts)."]}}),
    ("posts-destroy-tool", {}, {"message": "Unknown tool 'posts-destroy-tool'; list the tools again."}),
])
async def test_bad_arguments_are_error_results_never_protocol_errors(connect, ann, tool, arguments, expected):
    async with connect(ann["token"]) as session:
        assert error(await session.call_tool(tool, arguments)) == expected


@pytest.mark.parametrize("config", [{"pagination": {"max_per_page": 3}}], indirect=True)
@pytest.mark.parametrize("arguments, expected", [({"perPage": 50}, 3), ({}, 3), ({"perPage": 2}, 2)])
async def test_max_per_page_clamps_per_page(connect, ann, api, arguments, expected):
    for i in range(5):
        await rest_post(api, "posts", ann["token"], title=f"p{i}")
    async with connect(ann["token"]) as session:
        listed = ok(await session.call_tool("posts-index-tool", arguments))
    assert (len(listed["data"]), listed["meta"]["per_page"], listed["meta"]["total"]) == (expected, expected, 5)


# -- comments, tags, users ----------------------------------------------------------------------------
async def test_comment_tools(connect, ann, bob, api, db):
    post = await rest_post(api, "posts", ann["token"], title="Post")
    async with connect(bob["token"]) as session:
        assert error(await session.call_tool("comments-store-tool", {"body": "Hi", "post_id": "f" * 24})) == {
            "message": INVALID, "errors": {"post_id": ["The selected post id is invalid."]}}
        comment = ok(await session.call_tool("comments-store-tool", {"body": "Hi", "post_id": post}))["data"]
        assert comment["attributes"]["user_id"] == bob["id"]
        listed = ok(await session.call_tool("comments-index-tool", {"post_id": post, "include": "post.user"}))
        assert [c["id"] for c in listed["data"]] == [comment["id"]]
        assert listed["data"][0]["relationships"]["post"][0]["relationships"]["user"][0]["id"] == ann["id"]
        shown = ok(await session.call_tool("comments-show-tool", {"id": comment["id"], "include": "user"}))
        assert shown["data"]["relationships"]["user"][0]["id"] == bob["id"]
        updated = ok(await session.call_tool("comments-update-tool", {"id": comment["id"], "body": "Hello"}))
        assert updated["data"]["attributes"]["body"] == "Hello"
    async with connect(ann["token"]) as session:
        assert error(await session.call_tool("comments-update-tool", {"id": comment["id"], "body": "x"})) == FORBIDDEN
        assert error(await session.call_tool("comments-delete-tool", {"id": comment["id"]})) == FORBIDDEN
    async with connect(bob["token"]) as session:
        assert ok(await confirmed(session, "comments-delete-tool", {"id": comment["id"]}))["deleted"] is True
        assert (await db.collection("comments").find_by_id(comment["id"]))["deleted_at"] is not None  # trashed
        assert error(await session.call_tool("comments-show-tool", {"id": comment["id"]})) == NOT_FOUND
        restored = ok(await session.call_tool("comments-restore-tool", {"id": comment["id"]}))["data"]
        assert restored["attributes"]["deleted_at"] is None and restored["attributes"]["body"] == "Hello"
        assert ok(await confirmed(session, "comments-delete-tool", {"id": comment["id"], "force": True}))["deleted"]
    assert await db.collection("comments").find_by_id(comment["id"]) is None


async def test_tag_tools(connect, ann, api):
    async with connect(ann["token"]) as session:
        tag = ok(await session.call_tool("tags-store-tool", {"name": "python"}))["data"]
        assert error(await session.call_tool("tags-store-tool", {"name": "python"})) == {
            "message": INVALID, "errors": {"name": ["The name has already been taken."]}}
        assert error(await session.call_tool("tags-store-tool", {"name": "x" * 51})) == {
            "message": INVALID, "errors": {"name": ["The name may not be greater than 50 characters."]}}
        listed = ok(await session.call_tool("tags-index-tool", {"search": "PYTH"}))
        shown = ok(await session.call_tool("tags-show-tool", {"id": tag["id"]}))
    assert [t["id"] for t in listed["data"]] == [tag["id"]]
    assert shown == await rest(api, f"/tags/{tag['id']}", ann["token"])


async def test_user_tools_and_the_profile_with_include(connect, ann, bob, api):
    post = await rest_post(api, "posts", ann["token"], title="Mine")
    async with connect(ann["token"]) as session:
        listed = ok(await session.call_tool("users-index-tool", {"search": "Bob"}))
        shown = ok(await session.call_tool("users-show-tool", {"id": ann["id"], "include": "posts"}))
        profile = ok(await session.call_tool("users-profile-tool", {"include": "posts"}))
        plain = ok(await session.call_tool("users-profile-tool", {}))
    assert [u["id"] for u in listed["data"]] == [bob["id"]]
    assert [p["id"] for p in shown["data"]["relationships"]["posts"]] == [post]
    assert profile == await rest(api, "/profile", ann["token"], include="posts")
    assert profile["id"] == ann["id"] and profile["type"] == "users"
    assert [p["id"] for p in profile["relationships"]["posts"]] == [post]
    assert "password" not in profile["attributes"]
    assert "relationships" not in plain


async def test_each_caller_sees_their_own_authorization_flags(connect, ann, bob, api):
    post = await rest_post(api, "posts", ann["token"], title="Ann's")
    async with connect(ann["token"]) as session:
        mine = ok(await session.call_tool("posts-show-tool", {"id": post}))["data"]["meta"]
    async with connect(bob["token"]) as session:
        theirs = ok(await session.call_tool("posts-show-tool", {"id": post}))["data"]["meta"]
    assert mine["authorizedToUpdate"] is True and theirs["authorizedToUpdate"] is False
