"""Bulk mutations: create<Type>Bulk, update<Type>Bulk, delete<Type>Bulk run the same
bulk operations as REST: all or nothing, errors keyed "<index>.<field>" in extensions."""
from storage import Filter
from tests.graphql.test_endpoint import failure, run
from tests.hooks import PostHooks

CREATE = 'mutation($items: [PostInput!]!) { createPostBulk(input: $items) { id title views version user { id } } }'
UPDATE = 'mutation($items: [PostBulkUpdate!]!) { updatePostBulk(input: $items) { id title views version } }'
DELETE = 'mutation($ids: [ID!]!) { deletePostBulk(ids: $ids) }'
TAGS = 'mutation($items: [TagInput!]!) { createTagBulk(input: $items) { id name } }'
INVALID = "The given data was invalid."


async def everything(db, collection: str) -> list[dict]:
    return await db.collection(collection).find(Filter(), sort=[("id", 1)])


async def create(api, user, *titles: str) -> list[dict]:
    body = await run(api, CREATE, {"items": [{"title": t} for t in titles]}, token=user["token"])
    return body["data"]["createPostBulk"]


async def test_create_bulk_creates_every_record_with_its_selected_relations(api, db, ann):
    posts = await create(api, ann, "One", "Two")
    assert [(p["title"], p["views"], p["version"], p["user"]) for p in posts] == [
        ("One", "0", 1, {"id": ann["id"]}), ("Two", "0", 1, {"id": ann["id"]})]
    assert [d["id"] for d in await everything(db, "posts")] == [p["id"] for p in posts]


async def test_invalid_items_are_one_validation_error_keyed_by_index_and_nothing_is_written(api, db, ann):
    body = await run(api, CREATE, {"items": [{"title": "Fine"}, {"views": -1}]}, token=ann["token"])
    assert body == {"data": None, "errors": [failure(CREATE, "createPostBulk", "VALIDATION_FAILED", INVALID, errors={
        "1.title": ["The title field is required."], "1.views": ["The views must be at least 0."]})]}
    assert await everything(db, "posts") == []


async def test_a_unique_conflict_halfway_takes_back_what_was_written(api, db, ann):
    body = await run(api, TAGS, {"items": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}, token=ann["token"])
    assert body["errors"] == [failure(TAGS, "createTagBulk", "VALIDATION_FAILED", INVALID,
                                      errors={"2.name": ["The name has already been taken."]})]
    assert await everything(db, "tags") == []


async def test_update_bulk_patches_each_record_and_a_stale_version_refuses_all(api, db, ann):
    one, two = await create(api, ann, "One", "Two")
    changed = await run(api, UPDATE, {"items": [{"id": one["id"], "views": "5"},
                                                {"id": two["id"], "version": 1, "title": "Deux"}]}, token=ann["token"])
    assert changed == {"data": {"updatePostBulk": [{"id": one["id"], "title": "One", "views": "5", "version": 2},
                                                   {"id": two["id"], "title": "Deux", "views": "0", "version": 2}]}}
    before = await everything(db, "posts")
    stale = await run(api, UPDATE, {"items": [{"id": one["id"], "version": 2, "title": "A"},
                                              {"id": two["id"], "version": 1, "title": "B"}]}, token=ann["token"])
    assert stale["errors"] == [failure(UPDATE, "updatePostBulk", "PRECONDITION_FAILED",
                                       "The record was changed since you read it.")]
    assert await everything(db, "posts") == before


async def test_update_bulk_of_a_record_the_user_cannot_change_is_forbidden(api, db, ann, bob):
    mine, = await create(api, ann, "Mine")
    theirs, = await create(api, bob, "Bob's")
    body = await run(api, UPDATE, {"items": [{"id": mine["id"], "views": "1"}, {"id": theirs["id"], "views": "1"}]},
                     token=ann["token"])
    assert body["errors"] == [failure(UPDATE, "updatePostBulk", "FORBIDDEN", "This action is unauthorized.")]
    assert [d["views"] for d in await everything(db, "posts")] == [0, 0]


async def test_delete_bulk_deletes_every_record_and_runs_the_hooks_in_bulk_order(api, db, ann, registry):
    one, two, _ = await create(api, ann, "One", "Two", "Kept")
    hooks = PostHooks(registry)
    assert await run(api, DELETE, {"ids": [one["id"], two["id"]]}, token=ann["token"]) == {
        "data": {"deletePostBulk": True}}
    assert [d["title"] for d in await everything(db, "posts")] == ["Kept"]
    assert [(door, name) for door, name, _, _ in hooks.calls] == [
        ("graphql", "before_delete"), ("graphql", "before_delete"), ("graphql", "deleted"), ("graphql", "deleted")]


async def test_delete_bulk_of_an_unknown_id_is_invalid_under_its_index(api, db, ann):
    one, = await create(api, ann, "One")
    body = await run(api, DELETE, {"ids": [one["id"], "0" * 24]}, token=ann["token"])
    assert body["errors"] == [failure(DELETE, "deletePostBulk", "VALIDATION_FAILED", INVALID,
                                      errors={"1.id": ["The selected id is invalid."]})]
    assert len(await everything(db, "posts")) == 1
