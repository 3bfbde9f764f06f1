"""Soft deletes in live feeds: trashing is `deleted`, restoring is `created`, for those who may see it."""
from tests.live.conftest import PREFIX
from tests.live.test_sse import data, post
from tests.soft_deletes import soft_posts  # noqa: F401  (a fixture)


async def test_trashing_is_deleted_and_restoring_is_created(soft_posts, api, feeds, ann):
    created = await post(api, ann["token"], title="Soon trashed")
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])  # joins after the record was created
    assert (await api.delete(f"{PREFIX}/posts/{created['id']}", token=ann["token"])).status == 204
    event = await feed.next()
    assert (event.event, data(event)) == ("deleted", {"data": {"id": created["id"], "type": "posts"}})
    assert (await api.post(f"{PREFIX}/posts/{created['id']}/restore", token=ann["token"])).status == 200
    event = await feed.next()
    shown = (await api.get(f"{PREFIX}/posts/{created['id']}", token=ann["token"])).json
    assert (event.event, data(event)) == ("created", shown)
    await api.patch(f"{PREFIX}/posts/{created['id']}", {"title": "Back"}, token=ann["token"])
    assert (await feed.next()).event == "updated"
