"""Actions over REST: listing, running on ids, on "all" (scope and filters,
in chunks of 200), on one record (If-Match), standalone; policies refuse before anything is written."""
import pytest

from service import Action, Policy
from service.core.operations.extensions import kebab, words
from tests.extensions import PREFIX, Installed, insert_posts, scope_posts_to_their_authors
from tests.hooks import PostHooks

FORBIDDEN = {"message": "This action is unauthorized."}
NOT_FOUND = {"message": "Not found."}
PUBLISH_FIELDS = {"type": "object", "properties": {"views": {
    "type": ["integer", "null"], "minimum": 0, "maximum": 2**63 - 1, "description": "Views."}}}


@pytest.fixture
def installed(registry):
    return Installed(registry)


async def create_post(api, user, title="Hello") -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": title}, token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def published(db, id: str) -> bool:
    return (await db.collection("posts").find_by_id(id))["published"] in (True, 1)


def test_keys_and_names_default_to_the_class_name():
    class PublishPosts(Action):
        pass

    class SendHTTPReminder(Action):
        key, name = "remind", "Remind them"

    assert (PublishPosts.key, PublishPosts.name) == ("publish-posts", "Publish Posts")
    assert (SendHTTPReminder.key, SendHTTPReminder.name) == ("remind", "Remind them")
    assert (kebab("SendHTTPReminder"), words("SendHTTPReminder")) == ("send-http-reminder", "Send Http Reminder")


async def test_the_collection_lists_its_actions_with_their_payload_schema(api, ann, installed):
    response = await api.get(f"{PREFIX}/posts/actions", token=ann["token"])
    assert response.status == 200, response.body
    assert response.json == {"data": [
        {"key": "publish-posts", "name": "Publish Posts", "standalone": False, "destructive": False,
         "fields": PUBLISH_FIELDS},
        {"key": "record-titles", "name": "Record Titles", "standalone": False, "destructive": False,
         "fields": {"type": "object", "required": ["reason"], "properties": {"reason": {
             "type": "string", "maxLength": 20, "minLength": 1, "description": "Reason."}}}},
        {"key": "archive", "name": "Archive Everything", "standalone": True, "destructive": True,
         "fields": {"type": "object", "properties": {}}},
    ]}


async def test_a_record_lists_the_actions_offered_on_it_and_a_missing_one_is_404(api, ann, installed):
    post = await create_post(api, ann)
    response = await api.get(f"{PREFIX}/posts/{post['id']}/actions", token=ann["token"])
    assert response.status == 200, response.body
    assert [a["key"] for a in response.json["data"]] == ["publish-posts", "record-titles"]  # not standalone
    missing = await api.get(f"{PREFIX}/posts/{'0' * 24}/actions", token=ann["token"])
    assert (missing.status, missing.json) == (404, NOT_FOUND)


async def test_publish_posts_on_ids_writes_through_the_update_path(api, db, ann, registry):
    hooks = PostHooks(registry)
    first, second = await create_post(api, ann, "One"), await create_post(api, ann, "Two")
    hooks.calls.clear()
    response = await api.post(f"{PREFIX}/posts/actions?action=publish-posts",
                              {"repositories": [first["id"], second["id"].upper()]}, token=ann["token"])
    assert (response.status, response.json) == (200, {"data": {"affected": 2}})
    for post in (first, second):
        stored = await db.collection("posts").find_by_id(post["id"])
        assert (stored["published"] in (True, 1), stored["_version"]) == (True, 2)
    assert hooks.names() == ["before_update", "updated", "before_update", "updated"]


async def test_one_record_the_policy_refuses_refuses_all_and_nothing_is_written(api, db, ann, bob, installed):
    mine, theirs = await create_post(api, ann), await create_post(api, bob)
    response = await api.post(f"{PREFIX}/posts/actions?action=publish-posts",
                              {"repositories": [mine["id"], theirs["id"]]}, token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert not await published(db, mine["id"]) and not await published(db, theirs["id"])
    guest = await api.post(f"{PREFIX}/posts/actions?action=record-titles",
                           {"repositories": [mine["id"]], "reason": "x"})
    assert (guest.status, guest.json) == (401, {"message": "Unauthenticated."})
    assert installed.record_titles.chunks == []  # handle never ran


async def test_an_unknown_action_is_404(api, ann, installed):
    post = await create_post(api, ann)
    for path in (f"{PREFIX}/posts/actions?action=nope", f"{PREFIX}/posts/actions",
                 f"{PREFIX}/posts/{post['id']}/actions?action=archive"):  # standalone: not on a record
        response = await api.post(path, {"repositories": [post["id"]]}, token=ann["token"])
        assert (response.status, response.json) == (404, NOT_FOUND), path


async def test_a_bad_payload_is_422_and_nothing_runs(api, db, ann, installed):
    post = await create_post(api, ann)
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles",
                              {"repositories": [post["id"]], "reason": "x" * 21}, token=ann["token"])
    assert (response.status, response.json) == (422, {"message": "The given data was invalid.", "errors": {
        "reason": ["The reason may not be greater than 20 characters."]}})
    bad = await api.post(f"{PREFIX}/posts/actions?action=publish-posts",
                         {"repositories": [post["id"]], "views": -1}, token=ann["token"])
    assert (bad.status, bad.json["errors"]) == (422, {"views": ["The views must be at least 0."]})
    assert installed.record_titles.chunks == [] and not await published(db, post["id"])


@pytest.mark.parametrize("selection, errors", [
    (None, {"repositories": ["The repositories field is required."]}),
    ("some", {"repositories": ['The repositories must be a list of ids or "all".']}),
    ([1], {"repositories": ['The repositories must be a list of ids or "all".']}),
])
async def test_a_missing_or_malformed_selection_is_422(api, ann, installed, selection, errors):
    body = {"reason": "r"} if selection is None else {"repositories": selection, "reason": "r"}
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles", body, token=ann["token"])
    assert (response.status, response.json["errors"]) == (422, errors)


async def test_an_id_the_user_cannot_see_is_422_by_its_place_like_one_that_does_not_exist(api, ann, bob, registry,
                                                                                       installed):
    scope_posts_to_their_authors(registry)
    mine, hidden = await create_post(api, ann), await create_post(api, bob)
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles",
                              {"repositories": [mine["id"], hidden["id"], "0" * 24, "nonsense"], "reason": "r"},
                              token=ann["token"])
    invalid = ["The selected record is invalid."]
    assert (response.status, response.json) == (422, {"message": "The given data was invalid.", "errors": {
        "repositories.1": invalid, "repositories.2": invalid, "repositories.3": invalid}})
    assert installed.record_titles.chunks == []


async def test_all_runs_on_what_the_scope_and_the_index_filters_select_in_chunks_of_200(api, db, ann, bob, registry,
                                                                                      installed):
    scope_posts_to_their_authors(registry)
    await insert_posts(db, ann["id"], 450)
    await insert_posts(db, ann["id"], 3, published=True)   # filtered out by ?published=false
    await insert_posts(db, bob["id"], 5)                     # outside ann's scope
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles&published=false&sort=-title&page=3",
                              {"repositories": "all", "reason": "because"}, token=ann["token"])
    assert (response.status, response.json) == (200, {"data": {"affected": 450}})
    chunks = installed.record_titles.chunks
    assert [len(chunk) for chunk in chunks] == [200, 200, 50]
    assert sorted(title for chunk in chunks for title in chunk) == [f"P{n:03}" for n in range(450)]
    assert installed.record_titles.payloads == [{"reason": "because"}] * 3


async def test_all_with_search_selects_what_the_index_search_finds(api, db, ann, installed):
    for title in ("Apples", "apple pie", "Pears"):
        await create_post(api, ann, title)
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles&search=apple",
                              {"repositories": "all", "reason": "r"}, token=ann["token"])
    assert (response.status, response.json) == (200, {"data": {"affected": 2}})
    assert sorted(installed.record_titles.chunks[0]) == ["Apples", "apple pie"]
    bad = await api.post(f"{PREFIX}/posts/actions?action=record-titles&title[gt]=a",
                         {"repositories": "all", "reason": "r"}, token=ann["token"])
    assert (bad.status, bad.json["message"]) == (
        400, "The field 'title' cannot be filtered; the filterable fields are: published, user_id, views.")


async def test_all_selecting_more_than_the_limit_is_refused(api, db, ann, restify, installed):
    restify.settings.set("actions", "max_records", 3)
    await insert_posts(db, ann["id"], 4)
    response = await api.post(f"{PREFIX}/posts/actions?action=record-titles",
                              {"repositories": "all", "reason": "r"}, token=ann["token"])
    assert (response.status, response.json) == (400, {
        "message": "The action would run on more than 3 records; narrow the filters.",
        "errors": {"repositories": ["More than 3 records are selected."]}})
    assert installed.record_titles.chunks == []


async def test_a_record_action_honours_if_match(api, db, ann, installed):
    post = await create_post(api, ann)
    path = f"{PREFIX}/posts/{post['id']}/actions?action=publish-posts"
    stale = await api.post(path, {}, token=ann["token"], headers={"If-Match": '"7"'})
    assert (stale.status, stale.json) == (412, {"message": "The record was changed since you read it."})
    weak = await api.post(path, {}, token=ann["token"], headers={"If-Match": 'W/"1"'})
    assert weak.status == 412
    assert not await published(db, post["id"])
    fresh = await api.post(path, {"views": 5}, token=ann["token"], headers={"If-Match": '"1"'})
    assert (fresh.status, fresh.json) == (200, {"data": {"affected": 1}})
    stored = await db.collection("posts").find_by_id(post["id"])
    assert (stored["published"] in (True, 1), stored["views"], stored["_version"]) == (True, 5, 2)


async def test_a_record_action_on_someone_elses_record_is_403(api, db, ann, bob, installed):
    post = await create_post(api, bob)
    response = await api.post(f"{PREFIX}/posts/{post['id']}/actions?action=publish-posts", {}, token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert not await published(db, post["id"])


async def test_a_standalone_action_runs_without_records_and_answers_its_dict(api, ann, installed):
    response = await api.post(f"{PREFIX}/posts/actions?action=archive", {}, token=ann["token"])
    assert (response.status, response.json) == (200, {"data": {"archived": 0, "by": ann["id"]}})
    guest = await api.post(f"{PREFIX}/posts/actions?action=archive", {})
    assert guest.status == 401  # run_action(None, None, action): guests are refused


async def test_a_policy_without_run_action_falls_back_to_update_and_store(api, db, ann, bob, registry, installed):
    class Plain(Policy):  # no run_action: records need update(), a standalone action store()
        def allow_restify(self, user):
            return True

        def show(self, user, record):
            return True

        def store(self, user):
            return user is not None and user.id == bob["id"]

        def update(self, user, record):
            return user is not None and record.user_id == user.id

    mine, theirs = await create_post(api, ann), await create_post(api, bob)
    registry.policies._by_name["Post"] = Plain()
    path = f"{PREFIX}/posts/actions?action=publish-posts"
    assert (await api.post(path, {"repositories": [theirs["id"]]}, token=ann["token"])).status == 403
    assert (await api.post(path, {"repositories": [mine["id"]]}, token=ann["token"])).json == {"data": {"affected": 1}}
    archive = f"{PREFIX}/posts/actions?action=archive"
    assert (await api.post(archive, {}, token=ann["token"])).status == 403
    assert (await api.post(archive, {}, token=bob["token"])).json == {"data": {"archived": 0, "by": bob["id"]}}
