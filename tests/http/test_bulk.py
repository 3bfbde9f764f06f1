"""Bulk store, update and delete over REST: every item validated and authorized
before anything is written, errors keyed "<index>.<field>", and all or nothing."""
import pytest

from storage import Filter
from tests.hooks import REFUSED, PostHooks, refused
from tests.policy_rules import own_scope, rules  # noqa: F401  (a fixture)

PREFIX = "/api/restify"
INVALID = "The given data was invalid."
FORBIDDEN = {"message": "This action is unauthorized."}
CHANGED = {"message": "The record was changed since you read it."}
MISSING_ID = "0" * 24


def invalid(errors: dict) -> dict:
    return {"message": INVALID, "errors": errors}


async def everything(db, collection: str) -> list[dict]:
    return await db.collection(collection).find(Filter(), sort=[("id", 1)])


async def create_posts(api, user, *titles: str) -> list[dict]:
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": t} for t in titles], token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


# -- store ------------------------------------------------------------------------------------------

async def test_bulk_store_creates_every_item_and_answers_them_in_order(api, db, ann):
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "One", "views": 3}, {"title": "Two"}],
                              token=ann["token"])
    assert response.status == 201, response.body
    data = response.json["data"]
    assert [(d["type"], d["attributes"]["title"], d["attributes"]["views"], d["attributes"]["user_id"])
            for d in data] == [("posts", "One", 3, ann["id"]), ("posts", "Two", 0, ann["id"])]
    assert [d["meta"]["version"] for d in data] == [1, 1]
    assert data[0]["meta"]["authorizedToUpdate"] is True
    shown = await api.get(f"{PREFIX}/posts/{data[1]['id']}", token=ann["token"])
    assert shown.json["data"] == data[1]
    assert [d["title"] for d in await everything(db, "posts")] == ["One", "Two"]


async def test_every_invalid_item_is_reported_under_its_index_and_nothing_is_written(api, db, ann):
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "Fine"}, {"views": -1}, {"title": "x" * 300}],
                              token=ann["token"])
    assert (response.status, response.json) == (422, invalid({
        "1.title": ["The title field is required."], "1.views": ["The views must be at least 0."],
        "2.title": ["The title may not be greater than 255 characters."]}))
    assert await everything(db, "posts") == []


async def test_a_unique_conflict_on_a_later_item_takes_back_the_items_already_written(api, db, ann):
    await api.post(f"{PREFIX}/tags", {"name": "kept"}, token=ann["token"])
    before = await everything(db, "tags")
    # Each name is new to the database when validated; the index refuses the repeat at item 2.
    response = await api.post(f"{PREFIX}/tags/bulk", [{"name": "a"}, {"name": "b"}, {"name": "a"}],
                              token=ann["token"])
    assert (response.status, response.json) == (422, invalid({"2.name": ["The name has already been taken."]}))
    assert await everything(db, "tags") == before


async def test_a_guest_is_refused_before_anything_is_validated(api, db):
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "One"}, {}])
    assert (response.status, response.json) == (401, {"message": "Unauthenticated."})


async def test_store_bulk_is_asked_and_falls_back_to_store(api, db, ann, rules):
    rules("posts", store_bulk=lambda user: False)
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "One"}], token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    single = await api.post(f"{PREFIX}/posts", {"title": "One"}, token=ann["token"])
    assert single.status == 201  # the single store still asks `store`
    assert await db.collection("posts").count(Filter()) == 1


@pytest.mark.parametrize("body, status, answer", [
    ([], 422, invalid({"items": ["At least one item is required."]})),
    ({"title": "One"}, 400, {"message": "A bulk write takes a JSON array of items."}),
    (None, 400, {"message": "A bulk write takes a JSON array of items."}),
    (["One", {"title": "Two"}, 3], 422, invalid({"0": ["The item must be an object."],
                                                 "2": ["The item must be an object."]})),
    ([{"title": {"$gt": ""}}], 422, invalid({"0.title": ["The title must be a string."]})),
], ids=["empty", "object", "no-body", "not-objects", "operator"])
async def test_what_is_not_an_array_of_valid_objects_is_refused_with_a_json_message(api, db, ann, body, status,
                                                                                     answer):
    response = await api.post(f"{PREFIX}/posts/bulk", body, token=ann["token"])
    assert (response.status, response.json) == (status, answer)
    assert await everything(db, "posts") == []


async def test_malformed_json_is_a_400(api, db, ann):
    response = await api.request("POST", f"{PREFIX}/posts/bulk", body='[{"title": "One"},', token=ann["token"],
                                 headers={"Content-Type": "application/json"})
    assert (response.status, response.json) == (400, {"message": "The request body is not valid JSON."})


@pytest.fixture
def few_items(config):
    config["bulk"] = {"max_items": 3}
    return config


async def test_more_than_bulk_max_items_is_a_422_and_writes_nothing(few_items, api, db, ann):
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": str(i)} for i in range(4)], token=ann["token"])
    assert (response.status, response.json) == (422, invalid({"items": ["At most 3 items may be sent at once."]}))
    assert await everything(db, "posts") == []
    assert (await api.post(f"{PREFIX}/posts/bulk", [{"title": str(i)} for i in range(3)],
                           token=ann["token"])).status == 201


async def test_a_body_over_the_size_limit_is_a_413(api, ann):
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "x" * 200}] * 6000, token=ann["token"])
    assert (response.status, response.json) == (413, {"message": "The request body is too large."})


# -- hooks ------------------------------------------------------------------------------------------

async def test_before_hooks_run_for_every_item_before_any_write_and_after_hooks_once_all_are_written(
        api, db, ann, registry):
    hooks = PostHooks(registry)
    seen_at_stored: list[int] = []
    stored = registry.get("posts").repository.stored

    async def counting(context, record):
        seen_at_stored.append(await db.collection("posts").count(Filter()))
        await stored(context, record)

    registry.get("posts").repository.stored = counting
    data = await create_posts(api, ann, "One", "Two")
    assert [(door, name, title) for door, name, _, title in hooks.calls] == [
        ("rest", "before_store", "One"), ("rest", "before_store", "Two"),
        ("rest", "stored", "One"), ("rest", "stored", "Two")]
    assert seen_at_stored == [2, 2]
    assert [c[2] for c in hooks.calls[2:]] == [d["id"] for d in data]


async def test_a_before_hook_refusing_one_item_writes_nothing_and_runs_no_after_hook(api, db, ann, registry):
    hooks = PostHooks(registry)
    calls = 0

    def second_refused(context, values):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise refused()

    registry.get("posts").repository.before_store = second_refused
    response = await api.post(f"{PREFIX}/posts/bulk", [{"title": "One"}, {"title": "Two"}], token=ann["token"])
    assert (response.status, response.json) == (422, invalid({f"1.{k}": v for k, v in REFUSED["errors"].items()}))
    assert await everything(db, "posts") == []
    assert hooks.names() == []


async def test_bulk_update_runs_every_before_update_first_and_updated_once_all_are_written(api, db, ann, registry):
    one, two = await create_posts(api, ann, "One", "Two")
    hooks = PostHooks(registry)
    response = await api.post(f"{PREFIX}/posts/bulk/update", [{"id": one["id"], "title": "Uno"},
                                                              {"id": two["id"], "title": "Dos"}], token=ann["token"])
    assert response.status == 200, response.body
    assert hooks.calls == [("rest", "before_update", one["id"], "Uno"), ("rest", "before_update", two["id"], "Dos"),
                           ("rest", "updated", one["id"], "Uno"), ("rest", "updated", two["id"], "Dos")]


# -- update -----------------------------------------------------------------------------------------

async def test_bulk_update_patches_each_record_with_only_the_fields_it_sends(api, db, ann):
    one, two = await create_posts(api, ann, "One", "Two")
    response = await api.post(f"{PREFIX}/posts/bulk/update",
                              [{"id": one["id"], "views": 7}, {"id": two["id"].upper(), "title": "Deux"}],
                              token=ann["token"])
    assert response.status == 200, response.body
    data = response.json["data"]
    assert [(d["id"], d["attributes"]["title"], d["attributes"]["views"], d["meta"]["version"]) for d in data] == [
        (one["id"], "One", 7, 2), (two["id"], "Deux", 0, 2)]


async def test_ids_the_user_cannot_see_are_invalid_like_missing_ones(api, db, ann, bob, rules):
    mine, = await create_posts(api, ann, "Mine")
    hidden, = await create_posts(api, bob, "Bob's")
    rules("posts", scope=own_scope)
    response = await api.post(f"{PREFIX}/posts/bulk/update",
                              [{"id": mine["id"], "views": 1}, {"id": hidden["id"], "views": 1},
                               {"id": MISSING_ID, "views": 1}, {"id": "nonsense", "views": 1}], token=ann["token"])
    invalid_id = ["The selected id is invalid."]
    assert (response.status, response.json) == (422, invalid({"1.id": invalid_id, "2.id": invalid_id,
                                                              "3.id": invalid_id}))
    assert [d["views"] for d in await everything(db, "posts")] == [0, 0]


async def test_one_record_the_user_may_not_update_refuses_the_whole_request(api, db, ann, bob):
    mine, = await create_posts(api, ann, "Mine")
    theirs, = await create_posts(api, bob, "Bob's")
    before = await everything(db, "posts")
    response = await api.post(f"{PREFIX}/posts/bulk/update",
                              [{"id": mine["id"], "views": 1}, {"id": theirs["id"], "views": 1}], token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert await everything(db, "posts") == before


async def test_update_bulk_is_asked_per_record(api, db, ann, rules):
    one, two = await create_posts(api, ann, "One", "Two")
    rules("posts", update_bulk=lambda user, record: record.title != "Two")
    response = await api.post(f"{PREFIX}/posts/bulk/update",
                              [{"id": one["id"], "views": 1}, {"id": two["id"], "views": 1}], token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert (await api.patch(f"{PREFIX}/posts/{two['id']}", {"views": 1}, token=ann["token"])).status == 200


@pytest.mark.parametrize("items, errors", [
    ([{"views": 1}], {"0.id": ["The id field is required."]}),
    ([{"id": {"$gt": ""}, "views": 1}], {"0.id": ["The id must be a string."]}),
    ([{"id": "ID", "views": 1}, {"id": "id", "views": 2}], {"1.id": ["The id field has a duplicate value."]}),
    ([{"id": "ID", "version": "1"}], {"0.version": ["version must be a whole number, the record's meta.version."]}),
], ids=["no-id", "operator", "duplicate", "bad-version"])
async def test_update_items_need_one_string_id_each(api, db, ann, items, errors):
    post, = await create_posts(api, ann, "One")
    sent = [{**item, "id": post["id"] if item.get("id") in ("ID", "id") else item["id"]} if "id" in item else item
            for item in items]
    if len(sent) == 2:
        sent[1]["id"] = post["id"].upper()
    response = await api.post(f"{PREFIX}/posts/bulk/update", sent, token=ann["token"])
    assert (response.status, response.json) == (422, invalid(errors))
    assert (await everything(db, "posts"))[0]["views"] == 0


async def test_a_stale_version_in_any_item_refuses_the_whole_request_with_412(api, db, ann):
    one, two = await create_posts(api, ann, "One", "Two")
    await api.patch(f"{PREFIX}/posts/{two['id']}", {"views": 5}, token=ann["token"])  # two is at version 2 now
    before = await everything(db, "posts")
    response = await api.post(f"{PREFIX}/posts/bulk/update", [{"id": one["id"], "version": 1, "title": "Uno"},
                                                              {"id": two["id"], "version": 1, "title": "Dos"}],
                              token=ann["token"])
    assert (response.status, response.json) == (412, CHANGED)
    assert await everything(db, "posts") == before
    current = await api.post(f"{PREFIX}/posts/bulk/update", [{"id": one["id"], "version": 1, "title": "Uno"},
                                                             {"id": two["id"], "version": 2, "title": "Dos"}],
                             token=ann["token"])
    assert [d["meta"]["version"] for d in current.json["data"]] == [2, 3]


async def test_an_update_failing_halfway_leaves_the_collection_exactly_as_before(api, db, ann):
    tags = (await api.post(f"{PREFIX}/tags/bulk", [{"name": n} for n in ("a", "b", "c")], token=ann["token"])).json
    a, b, c = (t["id"] for t in tags["data"])
    before = await everything(db, "tags")
    # "x" is new when each item is validated; the unique index refuses it at item 2, after item 0 and 1 wrote.
    response = await api.post(f"{PREFIX}/tags/bulk/update", [{"id": a, "name": "x"}, {"id": b, "name": "y"},
                                                             {"id": c, "name": "x"}], token=ann["token"])
    assert (response.status, response.json) == (422, invalid({"2.name": ["The name has already been taken."]}))
    assert await everything(db, "tags") == before


# -- delete -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["DELETE", "POST"])
async def test_bulk_delete_removes_every_record_named_and_answers_204(api, db, ann, method):
    one, two, _ = await create_posts(api, ann, "One", "Two", "Kept")
    response = await api.request(method, f"{PREFIX}/posts/bulk/delete", [one["id"], two["id"]], token=ann["token"])
    assert (response.status, response.body) == (204, b"")
    assert [d["title"] for d in await everything(db, "posts")] == ["Kept"]


async def test_a_delete_refused_for_one_record_deletes_none(api, db, ann, bob):
    mine, = await create_posts(api, ann, "Mine")
    theirs, = await create_posts(api, bob, "Bob's")
    response = await api.request("DELETE", f"{PREFIX}/posts/bulk/delete", [mine["id"], theirs["id"]],
                                 token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert len(await everything(db, "posts")) == 2


async def test_delete_items_may_carry_the_version_read_and_a_stale_one_deletes_nothing(api, db, ann):
    one, two = await create_posts(api, ann, "One", "Two")
    await api.patch(f"{PREFIX}/posts/{two['id']}", {"views": 5}, token=ann["token"])
    response = await api.request("DELETE", f"{PREFIX}/posts/bulk/delete",
                                 [{"id": one["id"], "version": 1}, {"id": two["id"], "version": 1}],
                                 token=ann["token"])
    assert (response.status, response.json) == (412, CHANGED)
    assert len(await everything(db, "posts")) == 2


async def test_a_delete_failing_halfway_puts_back_what_it_deleted(api, db, ann, registry):
    one, two, three = await create_posts(api, ann, "One", "Two", "Three")
    before = await everything(db, "posts")
    collection = type(db.collection("posts"))
    remove = collection.remove
    calls = 0

    async def changed_meanwhile(self, id, versions=None):
        # The third record is changed by another writer between the read and its delete.
        nonlocal calls
        calls += 1
        if calls == 3:
            await self.swap(id, {"views": 9})
        return await remove(self, id, versions)

    collection.remove = changed_meanwhile
    try:
        response = await api.request("DELETE", f"{PREFIX}/posts/bulk/delete",
                                     [{"id": one["id"], "version": 1}, {"id": two["id"], "version": 1},
                                      {"id": three["id"], "version": 1}], token=ann["token"])
    finally:
        collection.remove = remove
    assert (response.status, response.json) == (412, CHANGED)
    after = await everything(db, "posts")
    assert after[:2] == before[:2] and after[2]["views"] == 9


async def test_bulk_delete_runs_before_hooks_first_and_after_hooks_once_all_are_deleted(api, db, ann, registry):
    one, two = await create_posts(api, ann, "One", "Two")
    hooks = PostHooks(registry)
    assert (await api.request("POST", f"{PREFIX}/posts/bulk/delete", [one["id"], two["id"]],
                              token=ann["token"])).status == 204
    assert hooks.names() == ["before_delete", "before_delete", "deleted", "deleted"]


async def test_delete_items_are_checked_for_shape_then_for_visibility(api, db, ann, bob, rules):
    mine, = await create_posts(api, ann, "Mine")
    theirs, = await create_posts(api, bob, "Bob's")
    rules("posts", scope=own_scope)
    shapes = await api.request("DELETE", f"{PREFIX}/posts/bulk/delete", [theirs["id"], 7, {"$gt": ""}],
                               token=ann["token"])
    assert (shapes.status, shapes.json) == (422, invalid({"1.id": ["The id must be a string."],
                                                          "2.id": ["The id field is required."]}))
    hidden = await api.request("DELETE", f"{PREFIX}/posts/bulk/delete", [mine["id"], theirs["id"]],
                               token=ann["token"])
    assert (hidden.status, hidden.json) == (422, invalid({"1.id": ["The selected id is invalid."]}))
    assert len(await everything(db, "posts")) == 2
