"""Soft deletes over GraphQL: delete<Type> trashes (force: true for good), `trashed` on the reads,
restore<Type>."""
from tests.graphql.test_endpoint import run
from tests.soft_deletes import created_post, soft_posts, trashed_post  # noqa: F401  (a fixture)


async def test_delete_trashes_restore_brings_back_and_force_deletes(soft_posts, api, db, ann):
    post = await created_post(api, ann["token"], title="Hello")
    assert await run(api, f'mutation {{ deletePost(id: "{post["id"]}") }}', token=ann["token"]) == {
        "data": {"deletePost": True}}
    assert await db.collection("posts").find_by_id(post["id"]) is not None
    lists = '{ postList { id } trashed: postList(trashed: ONLY) { id deleted_at } }'
    body = await run(api, lists, token=ann["token"])
    assert body["data"]["postList"] == [] and body["data"]["trashed"][0]["id"] == post["id"]
    assert body["data"]["trashed"][0]["deleted_at"] is not None
    shown = await run(api, f'{{ post(id: "{post["id"]}", trashed: WITH) {{ id }} }}', token=ann["token"])
    assert shown == {"data": {"post": {"id": post["id"]}}}
    restored = await run(api, f'mutation {{ restorePost(id: "{post["id"]}") {{ id title deleted_at }} }}',
                         token=ann["token"])
    assert restored == {"data": {"restorePost": {"id": post["id"], "title": "Hello", "deleted_at": None}}}
    forced = await run(api, f'mutation {{ deletePost(id: "{post["id"]}", force: true) }}', token=ann["token"])
    assert forced == {"data": {"deletePost": True}}
    assert await db.collection("posts").find_by_id(post["id"]) is None


async def test_restoring_what_is_not_trashed_is_not_found(soft_posts, api, ann):
    post = await created_post(api, ann["token"])
    body = await run(api, f'mutation {{ restorePost(id: "{post["id"]}") {{ id }} }}', token=ann["token"])
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
