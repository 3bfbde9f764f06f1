"""Computed fields in live events: as show gives them."""
from tests.computed_fields import computed_posts  # noqa: F401  (a fixture)
from tests.live.conftest import PREFIX
from tests.live.test_sse import data, post


async def test_an_event_carries_computed_values(computed_posts, api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    await post(api, ann["token"], title="Live")
    attributes = data(await feed.next())["data"]["attributes"]
    assert (attributes["comment_count"], attributes["shout"]) == (0, "LIVE")
