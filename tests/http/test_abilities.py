"""Abilities over REST: every repository operation asks the token's abilities (in the operations layer),
relations need their repository's read, actions their key, getters read; the profile and guests need none."""
import pytest

PREFIX = "/api/restify"


def missing(ability: str) -> dict:
    return {"message": f'This token lacks the ability "{ability}".', "code": "MISSING_ABILITY", "ability": ability}


async def token_for(api, owner: dict, *abilities: str) -> str:
    response = await api.post("/api/tokens", {"name": "narrow", "abilities": list(abilities)}, token=owner["token"])
    assert response.status == 201, response.body
    return response.json["meta"]["token"]


async def post_of(api, owner: dict, **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", **attributes}, token=owner["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def refused(response, ability: str) -> None:
    assert (response.status, response.json) == (403, missing(ability))


async def test_a_read_token_reads_posts_and_is_refused_every_write(api, db, ann):
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    listed = await api.get(f"{PREFIX}/posts", token=reader)
    assert (listed.status, [p["id"] for p in listed.json["data"]]) == (200, [post["id"]])
    assert (await api.get(f"{PREFIX}/posts/{post['id']}", token=reader)).json["data"]["attributes"]["title"] == "Hello"
    record = f"{PREFIX}/posts/{post['id']}"
    for response in (await api.post(f"{PREFIX}/posts", {"title": "x"}, token=reader),
                     await api.put(record, {"title": "x"}, token=reader),
                     await api.patch(record, {"title": "x"}, token=reader),
                     await api.delete(record, token=reader),
                     await api.post(f"{PREFIX}/posts/bulk", [{"title": "x"}], token=reader),
                     await api.post(f"{PREFIX}/posts/bulk/delete", [post["id"]], token=reader),
                     await api.post(f"{record}/attach/tags", {"tags": []}, token=reader)):
        await refused(response, "posts:write")
    assert (await api.get(record, token=reader)).json["data"]["attributes"]["title"] == "Hello"  # nothing changed
    assert (await api.get(f"{PREFIX}/posts", token=reader)).json["meta"]["total"] == 1


async def test_other_repositories_need_their_own_ability(api, ann):
    reader = await token_for(api, ann, "posts:read")
    await refused(await api.get(f"{PREFIX}/comments", token=reader), "comments:read")
    await refused(await api.get(f"{PREFIX}/tags/{'0' * 24}", token=reader), "tags:read")
    nope = await api.get(f"{PREFIX}/nothings", token=reader)  # an unknown repository is a 404 first
    assert nope.status == 404


async def test_a_write_token_also_reads(api, ann):
    writer = await token_for(api, ann, "posts:write")
    created = await api.post(f"{PREFIX}/posts", {"title": "Mine"}, token=writer)
    assert created.status == 201
    assert (await api.get(f"{PREFIX}/posts/{created.json['data']['id']}", token=writer)).status == 200
    assert (await api.patch(f"{PREFIX}/posts/{created.json['data']['id']}", {"title": "Two"}, token=writer)).status == 200


async def test_related_records_need_the_read_of_their_repository(api, ann):
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    await refused(await api.get(f"{PREFIX}/posts?related=comments", token=reader), "comments:read")
    await refused(await api.get(f"{PREFIX}/posts/{post['id']}?include=user", token=reader), "users:read")
    await refused(await api.get(f"{PREFIX}/posts?related=comments.user", token=reader), "comments:read")
    both = await token_for(api, ann, "posts:read", "users:read")
    shown = await api.get(f"{PREFIX}/posts/{post['id']}?include=user", token=both)
    assert shown.json["data"]["relationships"]["user"][0]["id"] == ann["id"]
    await refused(await api.get(f"{PREFIX}/posts?related=user.posts,comments", token=both), "comments:read")


async def test_an_eager_relation_the_token_may_not_read_comes_back_empty(api, ann, registry, monkeypatch):
    monkeypatch.setattr(registry.get("posts").model, "eager", ("user",))
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    assert (await api.get(f"{PREFIX}/posts/{post['id']}", token=reader)).json["data"]["relationships"] == {"user": []}
    full = (await api.get(f"{PREFIX}/posts/{post['id']}", token=ann["token"])).json["data"]["relationships"]
    assert [u["id"] for u in full["user"]] == [ann["id"]]


async def test_an_action_needs_its_key_or_write_and_its_own_writes_need_nothing_more(api, ann):
    post = await post_of(api, ann)
    publisher = await token_for(api, ann, "posts:publish-posts")
    run = await api.post(f"{PREFIX}/posts/{post['id']}/actions?action=publish-posts", {}, token=publisher)
    assert (run.status, run.json) == (200, {"data": {"affected": 1}})
    await refused(await api.patch(f"{PREFIX}/posts/{post['id']}", {"title": "x"}, token=publisher), "posts:write")
    await refused(await api.get(f"{PREFIX}/posts", token=publisher), "posts:read")
    reader = await token_for(api, ann, "posts:read")
    await refused(await api.post(f"{PREFIX}/posts/{post['id']}/actions?action=publish-posts", {}, token=reader),
                  "posts:publish-posts")
    assert (await api.get(f"{PREFIX}/posts/{post['id']}/actions", token=reader)).status == 200  # listing reads
    writer = await token_for(api, ann, "posts:write")
    run = await api.post(f"{PREFIX}/posts/{post['id']}/actions?action=publish-posts", {}, token=writer)
    assert run.status == 200


async def test_getters_need_read_and_what_they_read_elsewhere_needs_its_read_too(api, ann):
    post = await post_of(api, ann)
    reader = await token_for(api, ann, "posts:read")
    stats = await api.get(f"{PREFIX}/posts/getters/post-stats", token=reader)
    assert (stats.status, stats.json) == (200, {"data": {"posts": 1, "published": 0}})
    await refused(await api.get(f"{PREFIX}/posts/{post['id']}/getters/post-stats", token=reader), "comments:read")
    both = await token_for(api, ann, "posts:read", "comments:read", "tags:read")
    assert (await api.get(f"{PREFIX}/posts/{post['id']}/getters/post-stats", token=both)).json == {
        "data": {"comments": 0, "views": 0, "tags": 0}}
    await refused(await api.get(f"{PREFIX}/posts/getters/post-stats", token=await token_for(api, ann, "tags:read")),
                  "posts:read")


async def test_the_profile_and_guests_need_no_ability(api, ann):
    narrow = await token_for(api, ann, "tags:read")
    profile = await api.get(f"{PREFIX}/profile", token=narrow)
    assert (profile.status, profile.json["id"]) == (200, ann["id"])
    assert (await api.put(f"{PREFIX}/profile", {"name": "Annie", "email": ann["email"]}, token=narrow)).status == 200
    await refused(await api.get(f"{PREFIX}/profile?include=posts", token=narrow), "posts:read")
    assert (await api.get(f"{PREFIX}/posts")).status == 200  # a guest: policies alone decide


@pytest.mark.parametrize("path", ["posts/events/ticket"])
async def test_a_feed_ticket_needs_read(api, ann, path):
    reader = await token_for(api, ann, "comments:read")
    await refused(await api.post(f"{PREFIX}/{path}", token=reader), "posts:read")
