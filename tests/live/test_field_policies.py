"""Fields by policy in live events: each subscriber's event leaves out what they may not see, and
a feed may not filter on such a field."""
from tests.field_policies import field_policies  # noqa: F401  (a fixture)
from tests.live.conftest import PREFIX
from tests.live.test_sse import data, post


async def test_an_event_carries_only_the_fields_its_subscriber_may_see(field_policies, api, feeds, ann, bob):
    mine = await feeds(f"{PREFIX}/posts/events", token=ann["token"])
    theirs = await feeds(f"{PREFIX}/posts/events", token=bob["token"])
    await post(api, ann["token"], views=4)
    assert data(await mine.next())["data"]["attributes"]["views"] == 4
    assert "views" not in data(await theirs.next())["data"]["attributes"]


async def test_a_feed_cannot_filter_on_a_field_its_user_may_not_see(field_policies, api, feeds, bob):
    feed = await feeds(f"{PREFIX}/posts/events?filter[views][gte]=1", token=bob["token"])
    assert feed.response.status_code == 400
