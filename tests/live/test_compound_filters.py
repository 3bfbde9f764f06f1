"""A feed's `filter=<JSON>` with any and not judges each change as the index selects records: a record
that stops matching is a delete, and the index lists exactly the records whose events arrived."""
import json
from urllib.parse import quote

from tests.live.conftest import PREFIX
from tests.live.test_sse import data, post

CHOSEN = {"any": [{"views": {"gte": 10}}, {"not": {"published": {"eq": False}}}]}


async def test_any_and_not_choose_the_records_of_a_feed_as_the_index_does(api, feeds, ann):
    feed = await feeds(f"{PREFIX}/posts/events?filter={quote(json.dumps(CHOSEN))}", token=ann["token"])
    await post(api, ann["token"], title="draft", views=3, published=False)
    popular = await post(api, ann["token"], title="popular draft", views=12, published=False)
    out = await post(api, ann["token"], title="out", views=1, published=True)
    assert [data(await feed.next())["data"]["id"] for _ in range(2)] == [popular["id"], out["id"]]
    listed = await api.get(f"{PREFIX}/posts?filter={quote(json.dumps(CHOSEN))}&sort=id", token=ann["token"])
    assert [record["id"] for record in listed.json["data"]] == [popular["id"], out["id"]]
    patched = await api.patch(f"{PREFIX}/posts/{out['id']}", {"published": False}, token=ann["token"])
    assert patched.status == 200, patched.body
    event = await feed.next()
    assert (event.event, data(event)) == ("deleted", {"data": {"id": out["id"], "type": "posts"}})


async def test_a_malformed_filter_is_a_400_before_the_stream_starts(feeds, ann):
    broken = quote('{"any": [')
    feed = await feeds(f"{PREFIX}/posts/events?filter={broken}", token=ann["token"])
    assert feed.response.status_code == 400
    assert (await feed.body())["message"] == \
        "The filter parameter must be a JSON object: Expecting value: line 1 column 10 (char 9)."
