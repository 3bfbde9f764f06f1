"""Attach, detach and sync over REST: `POST <prefix>/posts/<id>/<operation>/tags` with
`{"tags": [ids]}` changes the post's `tag_ids` in one atomic write, answers the post with its tags."""
import asyncio

import pytest

from service import any_of
from storage import VERSION
from tests.hooks import REFUSED, PostHooks, refused
from tests.policy_rules import own_scope, rules  # noqa: F401  (rules: a fixture)

PREFIX = "/api/restify"
CHANGED = {"message": "The record was changed since you read it."}
FORBIDDEN = {"message": "This action is unauthorized."}
MISSING = "0123456789abcdef01234567"


async def create_post(api, user, **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", **attributes}, token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def create_tags(api, user, *names: str) -> dict[str, dict]:
    tags = {}
    for name in names:
        response = await api.post(f"{PREFIX}/tags", {"name": name}, token=user["token"])
        assert response.status == 201, response.body
        tags[name] = response.json["data"]
    return tags


async def stored(db, id: str) -> dict:
    return await db.collection("posts").find_by_id(id)


def related(tag: dict) -> dict:
    """A tag as a relationship shows it: without meta."""
    return {key: value for key, value in tag.items() if key != "meta"}


async def change(api, user, post_id: str, operation: str, ids: list, relation: str = "tags", **kw):
    token = user["token"] if user else None
    return await api.post(f"{PREFIX}/posts/{post_id}/{operation}/{relation}", {relation: ids}, token=token, **kw)


@pytest.fixture
def blog(api, io_loop, ann):
    async def make():
        return await create_post(api, ann), await create_tags(api, ann, "tech", "news", "misc")
    return io_loop.run_sync(make)


# -- the three operations ---------------------------------------------------------------------

async def test_a_new_record_stores_its_belongs_to_many_keys_as_empty_arrays(api, db, ann):
    post = await create_post(api, ann)
    assert (await stored(db, post["id"]))["tag_ids"] == []


async def test_attach_adds_each_id_once_and_answers_the_record_with_the_relation(api, db, ann, blog):
    post, tags = blog
    ids = [tags["tech"]["id"], tags["news"]["id"]]
    response = await change(api, ann, post["id"], "attach", [ids[0], ids[1], ids[0].upper()])
    assert response.status == 200, response.body
    data = response.json["data"]
    record = await stored(db, post["id"])
    assert record["tag_ids"] == ids
    assert (record[VERSION], data["meta"]["version"]) == (2, 2)
    assert data["relationships"] == {"tags": [related(tags["tech"]), related(tags["news"])]}
    assert data["attributes"] == {**post["attributes"], "updated_at": record["updated_at"]}
    assert record["updated_at"] > post["attributes"]["updated_at"]
    assert "ETag" not in response.headers  # an answer with relations carries none (as show)
    again = await change(api, ann, post["id"], "attach", [ids[1], tags["misc"]["id"]])
    assert (await stored(db, post["id"]))["tag_ids"] == [*ids, tags["misc"]["id"]]
    assert again.json["data"]["meta"]["version"] == 3


async def test_detach_takes_ids_out_and_ignores_ones_not_attached(api, db, ann, blog):
    post, tags = blog
    await change(api, ann, post["id"], "attach", [tags["tech"]["id"], tags["news"]["id"]])
    response = await change(api, ann, post["id"], "detach", [tags["tech"]["id"], tags["misc"]["id"]])
    assert response.status == 200, response.body
    assert response.json["data"]["relationships"] == {"tags": [related(tags["news"])]}
    assert (await stored(db, post["id"]))["tag_ids"] == [tags["news"]["id"]]


async def test_sync_makes_the_ids_the_set_and_an_empty_list_detaches_every_one(api, db, ann, blog):
    post, tags = blog
    await change(api, ann, post["id"], "attach", [tags["tech"]["id"], tags["news"]["id"]])
    response = await change(api, ann, post["id"], "sync", [tags["misc"]["id"], tags["news"]["id"]])
    assert response.status == 200, response.body
    assert (await stored(db, post["id"]))["tag_ids"] == [tags["news"]["id"], tags["misc"]["id"]]
    assert response.json["data"]["relationships"] == {"tags": [related(tags["news"]), related(tags["misc"])]}
    emptied = await change(api, ann, post["id"], "sync", [])
    assert (emptied.status, emptied.json["data"]["relationships"]) == (200, {"tags": []})
    assert (await stored(db, post["id"]))["tag_ids"] == []


async def test_sync_keeps_the_attached_ids_the_user_cannot_see(api, db, ann, blog, rules):
    post, tags = blog
    await change(api, ann, post["id"], "attach", [tags["tech"]["id"], tags["news"]["id"]])
    rules("tags", scope=lambda user: any_of({"name": "news"}, {"name": "misc"}))
    response = await change(api, ann, post["id"], "sync", [tags["misc"]["id"]])
    assert response.status == 200, response.body
    assert (await stored(db, post["id"]))["tag_ids"] == [tags["tech"]["id"], tags["misc"]["id"]]
    assert response.json["data"]["relationships"] == {"tags": [related(tags["misc"])]}  # tech stays hidden


async def test_the_answer_brings_other_asked_relations_and_keeps_the_relatable_cap(api, ann, blog):
    post, tags = blog
    ids = [tag["id"] for tag in tags.values()]
    response = await api.post(f"{PREFIX}/posts/{post['id']}/attach/tags?related=user&relatablePerPage=2",
                              {"tags": ids}, token=ann["token"])
    assert response.status == 200, response.body
    relationships = response.json["data"]["relationships"]
    assert [t["id"] for t in relationships["tags"]] == ids[:2]
    assert [u["id"] for u in relationships["user"]] == [ann["id"]]


async def test_a_record_stored_without_the_array_can_be_attached_to(api, db, ann, blog):
    post, tags = blog
    legacy = await db.collection("posts").insert({"title": "Old", "user_id": ann["id"]})
    response = await change(api, ann, legacy["id"], "attach", [tags["tech"]["id"]])
    assert response.status == 200, response.body
    assert ((await stored(db, legacy["id"]))["tag_ids"], response.json["data"]["meta"]["version"]) == (
        [tags["tech"]["id"]], 1)


# -- what is refused, and then nothing is written -----------------------------------------------

@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
async def test_ids_that_do_not_exist_or_cannot_be_seen_are_422_under_the_relation(
        api, db, ann, blog, rules, operation):
    post, tags = blog
    rules("tags", scope=lambda user: {"name": "tech"})
    before = await stored(db, post["id"])
    sent = [tags["tech"]["id"], tags["news"]["id"], MISSING, "not-an-id"]
    response = await change(api, ann, post["id"], operation, sent)
    assert (response.status, response.json) == (422, {"message": "The given data was invalid.", "errors": {
        "tags": [f"The selected tags is invalid: {tags['news']['id']}, {MISSING}, not-an-id."]}})
    assert await stored(db, post["id"]) == before


@pytest.mark.parametrize("body, message", [
    ({}, "The tags field is required."),
    ({"tags": []}, "The tags field is required."),
    ({"tags": None}, "The tags field is required."),
    ({"tags": "abc"}, "The tags must be a list of ids."),
    ({"tags": [1, 2]}, "The tags must be a list of ids."),
    ({"tags": [["x"]]}, "The tags must be a list of ids."),
    ({"tags": {"id": "x"}}, "The tags must be a list of ids."),
])
async def test_a_body_without_a_list_of_ids_is_422(api, db, ann, blog, body, message):
    post, _ = blog
    before = await stored(db, post["id"])
    response = await api.post(f"{PREFIX}/posts/{post['id']}/attach/tags", body, token=ann["token"])
    assert (response.status, response.json["errors"]) == (422, {"tags": [message]})
    assert await stored(db, post["id"]) == before


@pytest.mark.parametrize("body", [b"[1, 2]", b"{not json", b'"tags"'])
async def test_a_body_that_is_not_a_json_object_is_400(api, ann, blog, body):
    post, _ = blog
    response = await api.post(f"{PREFIX}/posts/{post['id']}/attach/tags", token=ann["token"], body=body,
                              headers={"Content-Type": "application/json"})
    assert response.status == 400 and "message" in response.json


@pytest.mark.parametrize("config", [{"attach": {"max_ids": 2}}], indirect=True)
async def test_more_ids_than_attach_max_ids_is_422(api, db, ann, blog):
    post, tags = blog
    response = await change(api, ann, post["id"], "attach", [t["id"] for t in tags.values()])
    assert (response.status, response.json["errors"]) == (
        422, {"tags": ["The tags may not have more than 2 ids (attach.max_ids)."]})
    assert (await stored(db, post["id"]))["tag_ids"] == []


@pytest.fixture
def config(config, request):
    return {**config, **getattr(request, "param", {})}


@pytest.mark.parametrize("path, message", [
    ("attach/nothing", "posts has no relation 'nothing'."),
    ("sync/comments", "The relation 'comments' of posts is not a BelongsToMany: only those are attached, "
                      "detached and synced."),
    ("detach/user", "The relation 'user' of posts is not a BelongsToMany: only those are attached, "
                    "detached and synced."),
])
async def test_a_relation_that_is_not_a_belongs_to_many_is_404(api, ann, blog, path, message):
    post, _ = blog
    response = await api.post(f"{PREFIX}/posts/{post['id']}/{path}", {"tags": []}, token=ann["token"])
    assert (response.status, response.json) == (404, {"message": message})


async def test_an_unknown_operation_record_or_repository_is_404(api, ann, blog, rules):
    post, tags = blog
    body = {"tags": [tags["tech"]["id"]]}
    for path in (f"posts/{post['id']}/append/tags", f"posts/{MISSING}/attach/tags", f"nothing/{post['id']}/attach/tags"):
        response = await api.post(f"{PREFIX}/{path}", body, token=ann["token"])
        assert response.status == 404 and "message" in response.json, path
    rules("posts", scope=lambda user: {"user_id": "someone else"})  # the post is hidden: as missing
    hidden = await api.post(f"{PREFIX}/posts/{post['id']}/attach/tags", body, token=ann["token"])
    assert (hidden.status, hidden.json) == (404, {"message": "Not found."})


@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
async def test_only_the_author_may_change_the_tags_and_a_guest_must_log_in(api, db, ann, bob, blog, operation):
    """The demo's `attach_tags` (the author) for attach; `update` (the author) for detach and sync."""
    post, tags = blog
    before = await stored(db, post["id"])
    assert (await change(api, bob, post["id"], operation, [tags["tech"]["id"]])).json == FORBIDDEN
    guest = await change(api, None, post["id"], operation, [tags["tech"]["id"]])
    assert (guest.status, guest.json) == (401, {"message": "Unauthenticated."})
    assert await stored(db, post["id"]) == before


async def test_attach_and_detach_ask_their_policy_method_for_each_related_record(api, db, ann, bob, blog, rules):
    post, tags = blog
    asked = []

    def attach_tags(user, record, tag):
        asked.append(("attach", user.id, record.id, tag.name))
        return tag.name != "misc"

    rules("posts", attach_tags=attach_tags, detach_tags=lambda user, record, tag: user.id == bob["id"])
    ok = await change(api, ann, post["id"], "attach", [tags["tech"]["id"], tags["news"]["id"]])
    assert ok.status == 200, ok.body
    assert asked == [("attach", ann["id"], post["id"], "tech"), ("attach", ann["id"], post["id"], "news")]
    refused_one = await change(api, ann, post["id"], "attach", [tags["tech"]["id"], tags["misc"]["id"]])
    assert (refused_one.status, refused_one.json) == (403, FORBIDDEN)
    assert (await change(api, ann, post["id"], "detach", [tags["tech"]["id"]])).status == 403
    by_bob = await change(api, bob, post["id"], "detach", [tags["tech"]["id"]])  # not the author: his policy says yes
    assert by_bob.status == 200, by_bob.body
    assert (await stored(db, post["id"]))["tag_ids"] == [tags["news"]["id"]]


async def test_sync_asks_its_own_method_or_else_the_attaches_and_detaches_it_makes(api, db, ann, bob, blog, rules):
    post, tags = blog
    await change(api, ann, post["id"], "attach", [tags["tech"]["id"]])
    rules("posts", attach_tags=lambda user, record, tag: tag.name == "news",
          detach_tags=lambda user, record, tag: False)
    assert (await change(api, ann, post["id"], "sync", [tags["tech"]["id"], tags["news"]["id"]])).status == 200
    assert (await change(api, ann, post["id"], "sync", [tags["news"]["id"]])).status == 403  # detaches tech
    rules("posts", sync_tags=lambda user, record: user.id == bob["id"])
    assert (await change(api, ann, post["id"], "sync", [tags["tech"]["id"], tags["news"]["id"]])).status == 403
    assert (await change(api, bob, post["id"], "sync", [tags["misc"]["id"]])).status == 200
    assert (await stored(db, post["id"]))["tag_ids"] == [tags["misc"]["id"]]


# -- If-Match ------------------------------------------------------------------------------------

@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
@pytest.mark.parametrize("if_match", ['"7"', 'W/"1"', '"x"'])
async def test_a_stale_if_match_is_412_and_changes_nothing(api, db, ann, blog, operation, if_match):
    post, tags = blog
    before = await stored(db, post["id"])
    response = await change(api, ann, post["id"], operation, [tags["tech"]["id"]], headers={"If-Match": if_match})
    assert (response.status, response.json) == (412, CHANGED)
    assert await stored(db, post["id"]) == before


@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
@pytest.mark.parametrize("if_match", ['"1"', '"4", "1"', "*"])
async def test_the_current_version_in_if_match_proceeds(api, db, ann, blog, operation, if_match):
    post, tags = blog
    response = await change(api, ann, post["id"], operation, [tags["tech"]["id"]], headers={"If-Match": if_match})
    assert (response.status, response.json["data"]["meta"]["version"]) == (200, 2)


async def test_the_version_an_attach_answers_is_the_one_the_next_write_needs(api, db, ann, blog):
    post, tags = blog
    attached = await change(api, ann, post["id"], "attach", [tags["tech"]["id"]], headers={"If-Match": '"1"'})
    version = attached.json["data"]["meta"]["version"]
    stale = await api.patch(f"{PREFIX}/posts/{post['id']}", {"views": 3}, token=ann["token"],
                            headers={"If-Match": '"1"'})
    assert stale.status == 412
    fresh = await api.patch(f"{PREFIX}/posts/{post['id']}", {"views": 3}, token=ann["token"],
                            headers={"If-Match": f'"{version}"'})
    assert fresh.status == 200, fresh.body


# -- hooks ---------------------------------------------------------------------------------------

async def test_a_relation_change_runs_before_update_and_updated(api, db, registry, ann, blog):
    post, tags = blog
    hooks = PostHooks(registry)
    seen = []
    repository = registry.get("posts").repository
    original = repository.before_update

    def before_update(context, record, values):
        seen.append((context.action, sorted(values)))
        return original(context, record, values)

    repository.before_update = before_update
    hooks.values["before_update"] = {"views": 7}
    assert (await change(api, ann, post["id"], "attach", [tags["tech"]["id"]])).status == 200
    assert (await change(api, ann, post["id"], "sync", [tags["news"]["id"]])).status == 200
    assert seen == [("attach", ["updated_at"]), ("sync", ["tag_ids", "updated_at"])]
    assert hooks.names() == ["before_update", "updated", "before_update", "updated"]
    assert (await stored(db, post["id"]))["views"] == 7  # what a before-hook sets is written with the change


async def test_a_before_update_hook_that_refuses_leaves_the_relation_unchanged(api, db, registry, ann, blog):
    post, tags = blog
    hooks = PostHooks(registry)
    hooks.refuse["before_update"] = refused()
    before = await stored(db, post["id"])
    response = await change(api, ann, post["id"], "attach", [tags["tech"]["id"]])
    assert (response.status, response.json) == (422, REFUSED)
    assert await stored(db, post["id"]) == before


# -- races ---------------------------------------------------------------------------------------

async def test_twenty_parallel_attaches_of_different_ids_lose_none(api, db, ann):
    post = await create_post(api, ann)
    tags = await create_tags(api, ann, *(f"t{n:02}" for n in range(20)))
    responses = await asyncio.gather(*(change(api, ann, post["id"], "attach", [tag["id"]]) for tag in tags.values()))
    assert [r.status for r in responses] == [200] * 20
    record = await stored(db, post["id"])
    assert sorted(record["tag_ids"]) == sorted(tag["id"] for tag in tags.values())
    assert record[VERSION] == 21
    assert sorted(r.json["data"]["meta"]["version"] for r in responses) == list(range(2, 22))


async def test_a_sync_without_if_match_racing_attaches_writes_a_set_it_computed_from_the_latest_read(api, db, ann):
    """Sync writes at the version it read (reading again when an attach came between): what it leaves
    is its own set, and every attach written after it is kept."""
    post = await create_post(api, ann)
    tags = await create_tags(api, ann, *(f"s{n}" for n in range(6)))
    ids = [tag["id"] for tag in tags.values()]
    results = await asyncio.gather(change(api, ann, post["id"], "sync", [ids[0]]),
                                   *(change(api, ann, post["id"], "attach", [i]) for i in ids[1:]))
    assert [r.status for r in results] == [200] * 6
    final = (await stored(db, post["id"]))["tag_ids"]
    synced = results[0].json["data"]["meta"]["version"]
    # Every attach answered after the sync's write is still there; the sync's own id is there.
    later = [i for i, r in zip(ids[1:], results[1:], strict=True) if r.json["data"]["meta"]["version"] > synced]
    assert sorted(final) == sorted([ids[0], *later])


async def test_the_answer_takes_sparse_fieldsets_like_show_and_a_bad_one_writes_nothing(api, db, ann, blog):
    post, tags = blog
    url = f"{PREFIX}/posts/{post['id']}/attach/tags"
    refused = await api.post(f"{url}?fields=nope", {"tags": [tags["tech"]["id"]]}, token=ann["token"])
    assert refused.status == 400, refused.body
    assert (await stored(db, post["id"]))["tag_ids"] == []
    response = await api.post(f"{url}?fields=title,tags", {"tags": [tags["tech"]["id"]]}, token=ann["token"])
    assert response.status == 200, response.body
    data = response.json["data"]
    assert data["attributes"] == {"title": "Hello"}
    assert data["relationships"] == {"tags": [related(tags["tech"])]}
