"""Sparse fieldsets (JSON:API): `fields[<type>]=a,b` and `fields=a,b` on index, show and
the profile, for the listed records and every related record of that type."""
import pytest

from tests.http.test_index_queries import bad_request, seed

PREFIX = "/api/restify"


@pytest.fixture
def content(api, db, ann, io_loop):
    """Ann's post with a comment by Ann and one by Bob (stored directly)."""
    async def make():
        post = (await api.post(f"{PREFIX}/posts", {"title": "Hello", "body": "Text", "views": 4},
                               token=ann["token"])).json["data"]["id"]
        bob = await seed(db, "users", name="Bob", email="bob@example.com", bio="Hi")
        for body, user in (("First", ann["id"]), ("Second", bob)):
            await seed(db, "comments", body=body, post_id=post, user_id=user)
        return {"post": post, "bob": bob}
    return io_loop.run_sync(make)


async def get(api, path, token):
    response = await api.get(f"{PREFIX}{path}", token=token)
    assert response.status == 200, response.body
    return response.json


def flags_only(meta):
    return set(meta) == {"authorizedToShow", "authorizedToStore", "authorizedToUpdate", "authorizedToDelete",
                         "version"}


async def test_fields_keeps_only_the_listed_attributes_of_the_listed_type(api, ann, content):
    body = await get(api, "/posts?fields=title,views", ann["token"])
    [post] = body["data"]
    assert list(post) == ["id", "type", "attributes", "meta"]
    assert (post["id"], post["type"], post["attributes"]) == (content["post"], "posts", {"title": "Hello", "views": 4})
    assert flags_only(post["meta"]) and body["meta"]["total"] == 1
    body = await get(api, "/posts?fields[posts]=updated_at", ann["token"])
    assert list(body["data"][0]["attributes"]) == ["updated_at"]
    assert (await get(api, "/posts?fields=", ann["token"]))["data"][0]["attributes"] == {}


async def test_fields_of_a_related_type_apply_at_every_depth(api, ann, content):
    path = (f"/posts/{content['post']}?related=user,comments.user&fields[posts]=title,comments"
            "&fields[users]=name&fields[comments]=body,user")
    post = (await get(api, path, ann["token"]))["data"]
    assert post["attributes"] == {"title": "Hello"}
    assert list(post["relationships"]) == ["comments"]  # `user` is not listed for posts
    comments = post["relationships"]["comments"]
    assert [(c["attributes"], [u["attributes"] for u in c["relationships"]["user"]]) for c in comments] == [
        ({"body": "First"}, [{"name": "Ann"}]), ({"body": "Second"}, [{"name": "Bob"}])]


async def test_a_type_without_a_fieldset_is_answered_whole_and_relations_not_listed_are_left_out(api, ann, content):
    body = await get(api, "/posts?related=user&fields[posts]=title", ann["token"])
    assert "relationships" not in body["data"][0]
    body = await get(api, "/posts?related=user&fields[users]=name", ann["token"])
    post = body["data"][0]
    assert set(post["attributes"]) == {"title", "body", "views", "published", "user_id", "cover", "created_at",
                                       "updated_at"}
    assert [u["attributes"] for u in post["relationships"]["user"]] == [{"name": "Ann"}]


async def test_listing_a_relation_does_not_load_it(api, ann, content):
    post = (await get(api, "/posts?fields=title,comments", ann["token"]))["data"][0]
    assert "relationships" not in post


async def test_profile_and_show_take_fields(api, ann, content):
    profile = await get(api, "/profile?fields=name,posts&related=posts&fields[posts]=views", ann["token"])
    assert profile["attributes"] == {"name": "Ann"}
    assert [p["attributes"] for p in profile["relationships"]["posts"]] == [{"views": 4}]
    shown = await get(api, f"/users/{content['bob']}?fields=bio", ann["token"])
    assert shown["data"]["attributes"] == {"bio": "Hi"}


@pytest.mark.parametrize("query, name, message", [
    ("fields[users]=password", "fields[users]", "The field 'password' cannot be selected for users."),
    ("fields[users]=name,nope", "fields[users]", "The field 'nope' cannot be selected for users."),
    ("fields=title,id", "fields", "The field 'id' cannot be selected for posts."),
    ("fields=title&fields[posts]=body", "fields[posts]",
     "Both fields and fields[posts] select the fields of posts: send one."),
    ("fields[nope]=x", "fields[nope]", "Unknown type 'nope' in fields[nope]."),
    ("fields[blog_posts]=x", "fields[blog_posts]", "Unknown type 'blog_posts' in fields[blog_posts]."),
])
async def test_an_unknown_or_hidden_field_or_a_repeated_type_is_a_400(api, ann, content, query, name, message):
    for path in ("/posts", f"/posts/{content['post']}", "/posts/0123456789abcdef01234567"):
        bad_request(await api.get(f"{PREFIX}{path}?{query}", token=ann["token"]), message, {name: [message]})


async def test_a_hidden_field_is_refused_like_an_unknown_one_on_the_profile(api, ann):
    message = "The field 'password' cannot be selected for users."
    bad_request(await api.get(f"{PREFIX}/profile?fields=password", token=ann["token"]), message,
                {"fields": [message]})
