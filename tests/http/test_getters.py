"""Getters over REST: listing and running them on the collection (`<r>/getters/run/<key>`) and on one
record; read policies apply (a record the user may not see is a 404), unknown keys are 404."""
import pytest

from tests.extensions import PREFIX, Installed, scope_posts_to_their_authors
from tests.http.test_index_queries import seed, seed_post
from tests.policy_rules import rules  # noqa: F401  (a fixture)

NOT_FOUND = {"message": "Not found."}


@pytest.fixture
def installed(registry):
    return Installed(registry)


async def create_post(api, user, title="Hello", **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": title, **attributes}, token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def test_the_collection_and_a_record_list_the_getters_offered_there(api, ann, installed):
    post = await create_post(api, ann)
    collection = await api.get(f"{PREFIX}/posts/getters")
    assert (collection.status, collection.json) == (200, {"data": [{"key": "post-stats", "name": "Post Stats"}]})
    record = await api.get(f"{PREFIX}/posts/{post['id']}/getters")
    assert (record.status, record.json) == (200, {"data": [{"key": "post-stats", "name": "Post Stats"},
                                                           {"key": "shout", "name": "Shout"}]})


async def test_post_stats_on_a_record_counts_its_comments_views_and_tags(api, ann, bob):
    post = await create_post(api, ann, views=12)
    for user in (ann, bob):
        comment = await api.post(f"{PREFIX}/comments", {"body": "Nice", "post_id": post["id"]}, token=user["token"])
        assert comment.status == 201, comment.body
    response = await api.get(f"{PREFIX}/posts/{post['id']}/getters/post-stats")
    assert (response.status, response.json) == (200, {"data": {"comments": 2, "views": 12, "tags": 0}})


async def test_post_stats_on_a_record_counts_only_the_tags_the_caller_may_see(api, db, ann, bob, rules):
    """A tag outside the tags' scope, one their `show` refuses, and one gone are not counted: the same
    visibility as the tags relation (scope, then show), so the count says nothing of hidden tags."""
    tags = {name: await seed(db, "tags", name=name) for name in ("open", "staff", "draft", "mine")}
    post = await seed_post(db, "Tagged", user_id=ann["id"], tag_ids=[*tags.values(), "0" * 24])
    rules("tags", scope=lambda user: {"name": {"ne": "staff"}},
          show=lambda user, record: record.name != "draft" and (record.name != "mine" or user is not None))
    counted = {}
    for who, token in (("guest", None), ("ann", ann["token"])):
        response = await api.get(f"{PREFIX}/posts/{post}/getters/post-stats", token=token)
        assert response.status == 200, response.body
        counted[who] = response.json["data"]["tags"]
    assert counted == {"guest": 1, "ann": 2}
    related = await api.get(f"{PREFIX}/posts/{post}?related=tags", token=ann["token"])
    assert len(related.json["data"]["relationships"]["tags"]) == counted["ann"]  # what the relation shows


async def test_post_stats_on_the_collection_counts_what_the_caller_may_see(api, ann, bob, registry):
    await create_post(api, ann)
    await create_post(api, ann, published=True)
    await create_post(api, bob, published=True)
    everyone = await api.get(f"{PREFIX}/posts/getters/run/post-stats")
    assert (everyone.status, everyone.json) == (200, {"data": {"posts": 3, "published": 2}})
    scope_posts_to_their_authors(registry)
    own = await api.get(f"{PREFIX}/posts/getters/run/post-stats", token=bob["token"])
    assert (own.status, own.json) == (200, {"data": {"posts": 1, "published": 1}})


async def test_a_getter_answers_any_json_value(api, ann, installed):
    post = await create_post(api, ann, "quiet")
    response = await api.get(f"{PREFIX}/posts/{post['id']}/getters/shout")
    assert (response.status, response.json) == (200, {"data": "QUIET"})


async def test_a_record_the_user_may_not_see_is_404_like_a_missing_one(api, ann, bob, registry, installed):
    scope_posts_to_their_authors(registry)
    post = await create_post(api, bob)
    for path in (f"{PREFIX}/posts/{post['id']}/getters/post-stats", f"{PREFIX}/posts/{post['id']}/getters",
                 f"{PREFIX}/posts/{'0' * 24}/getters/post-stats"):
        response = await api.get(path, token=ann["token"])
        assert (response.status, response.json) == (404, NOT_FOUND), path
    assert (await api.get(f"{PREFIX}/posts/{post['id']}/getters/post-stats", token=bob["token"])).status == 200


async def test_an_unknown_getter_or_one_not_offered_there_is_404(api, ann, installed):
    post = await create_post(api, ann)
    for path in (f"{PREFIX}/posts/getters/run/nope", f"{PREFIX}/posts/getters/run/shout",  # shout: records only
                 f"{PREFIX}/posts/{post['id']}/getters/nope"):
        response = await api.get(path)
        assert (response.status, response.json) == (404, NOT_FOUND), path
    response = await api.get(f"{PREFIX}/nothing/getters/run/post-stats")  # a guest: no list of repositories
    assert (response.status, response.json) == (404, {"message": "No repository 'nothing'."})


async def test_a_repository_the_policy_closes_is_closed_to_its_getters(api, ann, registry):
    policy = registry.policies.for_model(registry.get("posts").model)
    policy.allow_restify = lambda user: user is not None
    response = await api.get(f"{PREFIX}/posts/getters/run/post-stats")
    assert (response.status, response.json) == (401, {"message": "Unauthenticated."})
    assert (await api.get(f"{PREFIX}/posts/getters/run/post-stats", token=ann["token"])).status == 200


async def test_the_old_collection_path_of_a_getter_still_answers_as_the_new_one(api, ann, bob, registry, installed):
    """`<r>/getters/<key>` is what clients called before `<r>/getters/run/<key>`: served, no longer documented."""
    await create_post(api, ann, published=True)
    scope_posts_to_their_authors(registry)
    for token in (None, ann["token"], bob["token"]):
        old = await api.get(f"{PREFIX}/posts/getters/post-stats", token=token)
        new = await api.get(f"{PREFIX}/posts/getters/run/post-stats", token=token)
        assert (old.status, old.json) == (new.status, new.json), token
    for key in ("nope", "shout"):
        response = await api.get(f"{PREFIX}/posts/getters/{key}")
        assert (response.status, response.json) == (404, NOT_FOUND), key
