"""Optimistic concurrency over REST: every write changes a record's version, show
answers it as a strong ETag, and PUT, PATCH, POST (update and upload) and DELETE honour If-Match
inside the atomic write."""
import asyncio

import pytest

import storage

PREFIX = "/api/restify"
CHANGED = {"message": "The record was changed since you read it."}


async def create_post(api, user, **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", **attributes}, token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def stored(db, id: str) -> dict | None:
    return await db.collection("posts").find_by_id(id)


# -- show: the version as a strong ETag -------------------------------------------------------

async def test_show_answers_the_version_as_a_private_strong_etag_that_each_write_changes(api, ann):
    post = await create_post(api, ann)
    assert post["meta"]["version"] == 1
    shown = await api.get(f"{PREFIX}/posts/{post['id']}", token=ann["token"])
    assert (shown.status, shown.headers["ETag"], shown.headers["Cache-Control"]) == (200, '"1"', "private")
    assert "Authorization" in [v.strip() for v in shown.headers["Vary"].split(",")]
    assert shown.json["data"]["meta"]["version"] == 1
    changed = await api.patch(f"{PREFIX}/posts/{post['id']}", {"views": 4}, token=ann["token"])
    assert changed.json["data"]["meta"]["version"] == 2
    again = await api.get(f"{PREFIX}/posts/{post['id']}", token=ann["token"])
    assert (again.headers["ETag"], again.json["data"]["meta"]["version"]) == ('"2"', 2)


async def test_a_matching_if_none_match_is_304_and_a_changed_record_is_answered_again(api, ann):
    post = await create_post(api, ann)
    url = f"{PREFIX}/posts/{post['id']}"
    unchanged = await api.get(url, headers={"If-None-Match": '"1"'})
    assert (unchanged.status, unchanged.body, unchanged.headers["ETag"]) == (304, b"", '"1"')
    head = await api.request("HEAD", url, headers={"If-None-Match": '"1"'})
    assert head.status == 304
    await api.patch(url, {"views": 4}, token=ann["token"])
    changed = await api.get(url, headers={"If-None-Match": '"1"'})
    assert (changed.status, changed.headers["ETag"], changed.json["data"]["attributes"]["views"]) == (200, '"2"', 4)


async def test_show_with_relations_has_no_etag_because_a_relations_change_keeps_the_version(api, ann):
    post = await create_post(api, ann)
    shown = await api.get(f"{PREFIX}/posts/{post['id']}?related=user")
    assert shown.status == 200 and "relationships" in shown.json["data"]
    assert "ETag" not in shown.headers
    assert shown.json["data"]["meta"]["version"] == 1  # the record's own version is still shown


async def test_index_rows_show_their_version_and_the_page_keeps_the_etag_of_its_body(api, ann):
    post = await create_post(api, ann)
    first = await api.get(f"{PREFIX}/posts")
    assert first.json["data"][0]["meta"]["version"] == 1
    assert (await api.get(f"{PREFIX}/posts", headers={"If-None-Match": first.headers["ETag"]})).status == 304
    await api.patch(f"{PREFIX}/posts/{post['id']}", {"views": 4}, token=ann["token"])
    second = await api.get(f"{PREFIX}/posts", headers={"If-None-Match": first.headers["ETag"]})
    assert (second.status, second.json["data"][0]["meta"]["version"]) == (200, 2)


async def test_a_record_written_before_versions_existed_is_version_0(api, db, ann):
    legacy = await db.collection("posts").insert({"title": "Old", "views": 0, "published": False,
                                                   "user_id": ann["id"]})
    url = f"{PREFIX}/posts/{legacy['id']}"
    shown = await api.get(url)
    assert (shown.headers["ETag"], shown.json["data"]["meta"]["version"]) == ('"0"', 0)
    changed = await api.patch(url, {"views": 1}, token=ann["token"], headers={"If-Match": '"0"'})
    assert (changed.status, changed.json["data"]["meta"]["version"]) == (200, 1)
    assert (await api.patch(url, {"views": 2}, token=ann["token"], headers={"If-Match": '"0"'})).status == 412


# -- writes: If-Match ---------------------------------------------------------------------------

WRITES = [("PUT", "", {"title": "Changed"}), ("PATCH", "", {"title": "Changed"}),
          ("POST", "", {"title": "Changed"}), ("POST", "/upload", {"title": "Changed"}), ("DELETE", "", None)]


@pytest.mark.parametrize("if_match", ['"7"', 'W/"1"', '"x"', '"1', ""])
@pytest.mark.parametrize("method, suffix, body", WRITES)
async def test_a_write_whose_if_match_is_not_the_current_version_is_412_and_changes_nothing(
        api, db, ann, method, suffix, body, if_match):
    """A weak tag never matches (strong comparison), nor does a tag that is not a version."""
    post = await create_post(api, ann)
    before = await stored(db, post["id"])
    response = await api.request(method, f"{PREFIX}/posts/{post['id']}{suffix}", body, token=ann["token"],
                                 headers={"If-Match": if_match})
    assert (response.status, response.json) == (412, CHANGED)
    assert await stored(db, post["id"]) == before


@pytest.mark.parametrize("if_match", ['"1"', '"5", "1"', "*", None])
@pytest.mark.parametrize("method, suffix, body", WRITES)
async def test_a_write_with_the_current_version_or_any_or_without_if_match_proceeds(
        api, db, ann, method, suffix, body, if_match):
    post = await create_post(api, ann)
    headers = {"If-Match": if_match} if if_match is not None else {}
    response = await api.request(method, f"{PREFIX}/posts/{post['id']}{suffix}", body, token=ann["token"],
                                 headers=headers)
    if method == "DELETE":
        assert response.status == 204
        assert await stored(db, post["id"]) is None
    else:
        assert (response.status, response.json["data"]["meta"]["version"]) == (200, 2)
        assert (await stored(db, post["id"]))["title"] == "Changed"


async def test_if_match_on_a_missing_record_is_404(api, ann):
    missing = "0123456789abcdef01234567"
    response = await api.patch(f"{PREFIX}/posts/{missing}", {"views": 1}, token=ann["token"],
                               headers={"If-Match": '"1"'})
    assert (response.status, response.json) == (404, {"message": "Not found."})


async def test_a_unique_conflict_with_the_current_version_is_422_not_412(api, db, ann):
    first = await api.post(f"{PREFIX}/tags", {"name": "alpha"}, token=ann["token"])
    second = await api.post(f"{PREFIX}/tags", {"name": "beta"}, token=ann["token"])
    id = second.json["data"]["id"]
    response = await api.patch(f"{PREFIX}/tags/{id}", {"name": "alpha"}, token=ann["token"],
                               headers={"If-Match": '"1"'})
    assert response.status == 422, response.body
    assert list(response.json["errors"]) == ["name"]
    assert (await db.collection("tags").find_by_id(id))["name"] == "beta"
    assert first.status == 201


# -- the race: the check is inside the atomic write ----------------------------------------------

async def test_two_editors_with_the_same_version_in_parallel_one_wins_the_other_is_412(api, db, ann):
    post = await create_post(api, ann)
    url = f"{PREFIX}/posts/{post['id']}"
    titles = [f"Editor {n}" for n in range(6)]
    responses = await asyncio.gather(*(api.patch(url, {"title": title}, token=ann["token"],
                                                 headers={"If-Match": '"1"'}) for title in titles))
    statuses = sorted(r.status for r in responses)
    assert statuses == [200] + [412] * (len(titles) - 1)
    (winner,) = [title for title, r in zip(titles, responses, strict=True) if r.status == 200]
    assert all(r.json == CHANGED for r in responses if r.status == 412)
    record = await stored(db, post["id"])
    assert (record["title"], record[storage.VERSION]) == (winner, 2)


@pytest.fixture
def other_editor(registry, db):
    """Another editor's write lands after the request has read the record and checked its version,
    just before it saves: the posts repository's before-hooks make that write."""
    async def write(record):
        await db.collection("posts").update(record.id, {"title": "The other editor's"})

    repository = registry.get("posts").repository
    repository.before_update = lambda context, record, values: write(record)
    repository.before_delete = lambda context, record: write(record)


@pytest.mark.parametrize("method, body", [("PATCH", {"title": "Mine"}), ("PUT", {"title": "Mine"}), ("DELETE", None)])
async def test_a_write_between_the_read_and_the_save_is_caught_by_the_save(api, db, ann, other_editor, method, body):
    post = await create_post(api, ann)
    response = await api.request(method, f"{PREFIX}/posts/{post['id']}", body, token=ann["token"],
                                 headers={"If-Match": '"1"'})
    assert (response.status, response.json) == (412, CHANGED)
    record = await stored(db, post["id"])
    assert (record["title"], record[storage.VERSION]) == ("The other editor's", 2)
