"""Soft deletes over REST: DELETE trashes, every read leaves trashed records out unless
`?trashed=with|only` (for those the policy lets see them), restore, and `?force=true`."""
import pytest

from storage import Filter
from tests.policy_rules import rules  # noqa: F401  (a fixture)
from tests.soft_deletes import PREFIX, created_post, soft_posts, trashed_post  # noqa: F401  (a fixture)

POSTS = f"{PREFIX}/posts"


async def ids(api, path: str, token: str | None = None) -> list[str]:
    response = await api.get(path, token=token)
    assert response.status == 200, response.body
    return [item["id"] for item in response.json["data"]]


async def test_delete_trashes_and_reads_leave_the_record_out(soft_posts, api, db, ann):
    kept = await created_post(api, ann["token"], title="Kept")
    gone = await trashed_post(api, ann["token"], title="Gone")
    stored = await db.collection("posts").find_by_id(gone["id"])
    assert stored is not None and stored["deleted_at"] == stored["updated_at"]
    assert (await api.get(f"{POSTS}/{gone['id']}", token=ann["token"])).status == 404
    listed = (await api.get(POSTS, token=ann["token"])).json
    assert [item["id"] for item in listed["data"]] == [kept["id"]] and listed["meta"]["total"] == 1
    assert await ids(api, f"{POSTS}?search=Gone", ann["token"]) == []
    assert (await api.delete(f"{POSTS}/{gone['id']}", token=ann["token"])).status == 404  # trashed already
    assert kept["attributes"]["deleted_at"] is None


async def test_trashed_with_and_only_for_those_who_may_see_them(soft_posts, api, ann, bob):
    kept = await created_post(api, ann["token"], title="Kept")
    gone = await trashed_post(api, ann["token"], title="Gone")
    assert await ids(api, f"{POSTS}?trashed=with&sort=title", ann["token"]) == [gone["id"], kept["id"]]
    assert await ids(api, f"{POSTS}?trashed=only", ann["token"]) == [gone["id"]]
    shown = (await api.get(f"{POSTS}/{gone['id']}?trashed=with", token=ann["token"])).json["data"]
    assert shown["attributes"]["deleted_at"] is not None
    # view_trashed defaults to the delete policy: only the author sees her trashed post
    assert await ids(api, f"{POSTS}?trashed=only", bob["token"]) == []
    assert (await api.get(f"{POSTS}/{gone['id']}?trashed=with", token=bob["token"])).status == 404
    refused = await api.get(f"{POSTS}?trashed=all", token=ann["token"])
    assert (refused.status, refused.json["message"]) == (400, "The trashed parameter must be with or only.")


async def test_relations_and_exists_leave_trashed_records_out(soft_posts, api, ann):
    post = await created_post(api, ann["token"])
    comment = (await api.post(f"{PREFIX}/comments", {"body": "Hi", "post_id": post["id"]}, token=ann["token"])).json
    await api.delete(f"{POSTS}/{post['id']}", token=ann["token"])
    shown = (await api.get(f"{PREFIX}/comments/{comment['data']['id']}?include=post", token=ann["token"])).json
    assert shown["data"]["relationships"]["post"] == []
    mine = (await api.get(f"{PREFIX}/users/{ann['id']}?include=posts", token=ann["token"])).json
    assert mine["data"]["relationships"]["posts"] == []
    refused = await api.post(f"{PREFIX}/comments", {"body": "Late", "post_id": post["id"]}, token=ann["token"])
    assert refused.status == 422 and "post_id" in refused.json["errors"]


async def test_restore_brings_a_trashed_record_back(soft_posts, api, db, ann, bob):
    gone = await trashed_post(api, ann["token"])
    assert (await api.post(f"{POSTS}/{gone['id']}/restore", token=bob["token"])).status == 404  # not his to see
    restored = await api.post(f"{POSTS}/{gone['id']}/restore", token=ann["token"])
    assert restored.status == 200, restored.body
    assert restored.json["data"]["id"] == gone["id"] and restored.json["data"]["attributes"]["deleted_at"] is None
    assert await ids(api, POSTS, ann["token"]) == [gone["id"]]
    assert (await api.post(f"{POSTS}/{gone['id']}/restore", token=ann["token"])).status == 404  # not trashed
    assert (await db.collection("posts").find_by_id(gone["id"]))["deleted_at"] is None


async def test_force_deletes_for_good_trashed_or_not(soft_posts, api, db, ann, bob):
    live = await created_post(api, ann["token"])
    gone = await trashed_post(api, ann["token"])
    assert (await api.delete(f"{POSTS}/{gone['id']}?force=true", token=bob["token"])).status == 404
    for post in (live, gone):
        assert (await api.delete(f"{POSTS}/{post['id']}?force=true", token=ann["token"])).status == 204
        assert await db.collection("posts").find_by_id(post["id"]) is None
    refused = await api.delete(f"{POSTS}/{live['id']}?force=maybe", token=ann["token"])
    assert refused.status == 400


async def test_policies_may_name_view_trashed_restore_and_force_delete(soft_posts, api, db, ann, rules):
    gone = await trashed_post(api, ann["token"])
    rules("posts", view_trashed=lambda user, record: True, restore=lambda user, record: False,
          force_delete=lambda user, record: False)
    assert await ids(api, f"{POSTS}?trashed=only") == [gone["id"]]  # a guest sees it now
    assert (await api.post(f"{POSTS}/{gone['id']}/restore", token=ann["token"])).status == 403
    assert (await api.delete(f"{POSTS}/{gone['id']}?force=true", token=ann["token"])).status == 403
    assert await db.collection("posts").count(Filter()) == 1


async def test_a_bulk_delete_trashes_every_record_or_none(soft_posts, api, db, ann, bob):
    one, two = await created_post(api, ann["token"]), await created_post(api, ann["token"])
    theirs = await created_post(api, bob["token"])
    refused = await api.request("DELETE", f"{POSTS}/bulk/delete", [one["id"], theirs["id"]], token=ann["token"])
    assert refused.status == 403
    response = await api.request("DELETE", f"{POSTS}/bulk/delete", [one["id"], two["id"]], token=ann["token"])
    assert response.status == 204, response.body
    assert await ids(api, POSTS, ann["token"]) == [theirs["id"]]
    assert sorted(await ids(api, f"{POSTS}?trashed=only", ann["token"])) == sorted([one["id"], two["id"]])
    assert await db.collection("posts").count(Filter()) == 3


@pytest.fixture
def soft_tags(monkeypatch, registry):
    monkeypatch.setattr(type(registry.get("tags").repository), "soft_deletes", True)


async def test_a_trashed_value_is_free_again_and_a_restore_may_not_take_it_back(soft_tags, api, db, ann):
    tags = f"{PREFIX}/tags"
    first = (await api.post(tags, {"name": "news"}, token=ann["token"])).json["data"]
    assert (await api.delete(f"{tags}/{first['id']}", token=ann["token"])).status == 204
    second = await api.post(tags, {"name": "news"}, token=ann["token"])  # the trashed tag holds it no more
    assert second.status == 201, second.body
    twice = await api.post(tags, {"name": "news"}, token=ann["token"])  # the live one does
    assert (twice.status, twice.json["errors"]) == (422, {"name": ["The name has already been taken."]})
    refused = await api.post(f"{tags}/{first['id']}/restore", token=ann["token"])
    assert (refused.status, refused.json["errors"]) == (422, {"name": ["The name has already been taken."]})
    stored = await db.collection("tags").find_by_id(first["id"])
    assert stored["deleted_at"] is not None  # still in the trash
    assert (await api.delete(f"{tags}/{second.json['data']['id']}?force=true", token=ann["token"])).status == 204
    restored = await api.post(f"{tags}/{first['id']}/restore", token=ann["token"])
    assert (restored.status, restored.json["data"]["attributes"]["name"]) == (200, "news")


def test_a_unique_index_on_a_collection_with_soft_deletes_keys_the_trash_stamp_too(soft_tags, registry):
    from service.core.declarations.indexes import unique_plan
    planned = [p for p in unique_plan(registry).indexes if p.collection == "tags"]
    assert [(p.keys, p.unique) for p in planned] == [((("name", 1), ("deleted_at", 1)), True)]
