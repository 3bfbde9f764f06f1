"""Computed fields over REST: in every answer, typed, never stored, never filtered or sorted on, and
one query per list of records whatever its length."""
import pytest

from tests.computed_fields import computed_posts  # noqa: F401  (a fixture)

PREFIX = "/api/restify"


async def _post(api, token: str, title: str, comments: int = 0) -> str:
    post = (await api.post(f"{PREFIX}/posts", {"title": title}, token=token)).json["data"]["id"]
    for n in range(comments):
        response = await api.post(f"{PREFIX}/comments", {"body": f"c{n}", "post_id": post}, token=token)
        assert response.status == 201, response.body
    return post


async def test_computed_values_are_in_every_answer_and_never_stored(computed_posts, api, db, ann):
    created = await api.post(f"{PREFIX}/posts", {"title": "Hello", "comment_count": 99}, token=ann["token"])
    assert created.status == 201
    attributes = created.json["data"]["attributes"]
    assert (attributes["comment_count"], attributes["title_length"], attributes["shout"]) == (0, 5, "HELLO")
    id = created.json["data"]["id"]
    stored = await db.collection("posts").find_by_id(id)
    assert not {"comment_count", "title_length", "shout"} & set(stored)
    await api.post(f"{PREFIX}/comments", {"body": "Hi", "post_id": id}, token=ann["token"])
    shown = (await api.get(f"{PREFIX}/posts/{id}", token=ann["token"])).json["data"]["attributes"]
    assert shown["comment_count"] == 1
    changed = await api.patch(f"{PREFIX}/posts/{id}", {"title": "Hi"}, token=ann["token"])
    assert changed.json["data"]["attributes"]["title_length"] == 2
    related = (await api.get(f"{PREFIX}/comments?include=post", token=ann["token"])).json["data"][0]
    assert related["relationships"]["post"][0]["attributes"]["comment_count"] == 1
    fieldset = (await api.get(f"{PREFIX}/posts?fields=comment_count", token=ann["token"])).json["data"][0]
    assert fieldset["attributes"] == {"comment_count": 1}


@pytest.mark.parametrize("query", ["sort=comment_count", "filter[comment_count][gte]=1", "-comment_count=1"])
async def test_filters_and_sorts_on_a_computed_field_are_a_bad_request(computed_posts, api, ann, query):
    assert (await api.get(f"{PREFIX}/posts?{query}", token=ann["token"])).status == 400


async def test_one_query_per_page_whatever_its_length(computed_posts, api, commands, ann):
    async def reads(per_page: int) -> list:
        commands.reset()
        response = await api.get(f"{PREFIX}/posts?perPage={per_page}&count=none", token=ann["token"])
        assert response.status == 200 and len(response.json["data"]) == per_page
        return [read for read in commands.reads() if read[1] in ("posts", "comments")]  # not the token's

    for n in range(15):
        await _post(api, ann["token"], f"Post {n}", comments=n % 3)
    assert await reads(2) == await reads(6) == await reads(15) == [("find", "posts"), ("aggregate", "comments")]
    page = (await api.get(f"{PREFIX}/posts?perPage=6&sort=created_at", token=ann["token"])).json["data"]
    assert [p["attributes"]["comment_count"] for p in page] == [0, 1, 2, 0, 1, 2]


async def test_a_single_records_count_by_is_a_count_not_a_group(computed_posts, api, commands, ann):
    # The embedded server groups by loading every matched record (its bodies too); a count of one
    # value it reads from an index.
    post = await _post(api, ann["token"], "Counted", comments=2)
    await _post(api, ann["token"], "Other", comments=1)
    commands.reset()
    shown = await api.get(f"{PREFIX}/posts/{post}", token=ann["token"])
    assert shown.json["data"]["attributes"]["comment_count"] == 2
    pipelines = [c["pipeline"] for c in commands.sent if c.get("aggregate") == "comments"]
    assert [[list(stage) for stage in pipeline] for pipeline in pipelines] == [[["$match"], ["$count"]]]
    assert pipelines[0][0]["$match"]["post_id"] == post
    commands.reset()
    listed = await api.get(f"{PREFIX}/posts?perPage=2&count=none", token=ann["token"])
    assert sorted(p["attributes"]["comment_count"] for p in listed.json["data"]) == [1, 2]
    assert [list(c["pipeline"][1]) for c in commands.sent if c.get("aggregate") == "comments"] == [["$group"]]
