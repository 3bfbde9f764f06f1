"""Repository hooks on the write path, through REST, in the write path's order."""
import pytest

from storage import Filter
from tests.hooks import REFUSED, PostHooks, forbidden, refused
from tests.images import multipart, png

PREFIX = "/api/restify"
FORBIDDEN = {"message": "This action is unauthorized."}


@pytest.fixture(params=[False, True], ids=["plain-before-async-after", "async-before-plain-after"])
def hooks(registry, request):
    return PostHooks(registry, mixed=request.param)


async def test_store_runs_before_store_then_stored_and_a_changed_value_is_stored_unvalidated(api, db, ann, hooks):
    hooks.values["before_store"] = {"title": "T" * 300, "body": "set by the hook"}  # past max:255
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])
    assert response.status == 201, response.body
    data = response.json["data"]
    assert (data["attributes"]["title"], data["attributes"]["body"]) == ("T" * 300, "set by the hook")
    record = await db.collection("posts").find_by_id(data["id"])
    assert (record["title"], record["body"]) == ("T" * 300, "set by the hook")
    assert hooks.calls == [("rest", "before_store", None, "Hello"), ("rest", "stored", data["id"], "T" * 300)]


async def test_update_runs_before_update_with_the_record_as_read_then_updated(api, db, ann, hooks):
    post = (await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])).json["data"]
    hooks.calls.clear()
    hooks.values["before_update"] = {"views": 99}
    response = await api.patch(f"{PREFIX}/posts/{post['id']}", {"title": "New"}, token=ann["token"])
    assert response.status == 200, response.body
    assert (await db.collection("posts").find_by_id(post["id"]))["views"] == 99
    assert hooks.calls == [("rest", "before_update", post["id"], "New"), ("rest", "updated", post["id"], "New")]


async def test_delete_runs_before_delete_then_deleted_with_the_record(api, db, ann, hooks):
    post = (await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])).json["data"]
    hooks.calls.clear()
    assert (await api.delete(f"{PREFIX}/posts/{post['id']}", token=ann["token"])).status == 204
    assert hooks.calls == [("rest", "before_delete", post["id"], "Hello"), ("rest", "deleted", post["id"], "Hello")]


@pytest.mark.parametrize("refusal, status, body", [(refused, 422, REFUSED), (forbidden, 403, FORBIDDEN)])
async def test_a_before_hook_that_refuses_leaves_nothing_written(api, db, ann, hooks, refusal, status, body):
    post = (await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])).json["data"]
    before = await db.collection("posts").find_by_id(post["id"])
    hooks.calls.clear()
    hooks.refuse = {name: refusal() for name in ("before_store", "before_update", "before_delete")}
    created = await api.post(f"{PREFIX}/posts", {"title": "Another"}, token=ann["token"])
    changed = await api.put(f"{PREFIX}/posts/{post['id']}", {"title": "New"}, token=ann["token"])
    deleted = await api.delete(f"{PREFIX}/posts/{post['id']}", token=ann["token"])
    assert [(r.status, r.json) for r in (created, changed, deleted)] == [(status, body)] * 3
    assert await db.collection("posts").find_by_id(post["id"]) == before
    assert await db.collection("posts").count(Filter()) == 1
    assert hooks.names() == ["before_store", "before_update", "before_delete"]  # no after-hook ran


async def test_a_refused_upload_update_leaves_no_file_behind(api, db, ann, hooks, tmp_path):
    post = (await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])).json["data"]
    hooks.refuse["before_update"] = refused()
    body, headers = multipart({"title": "Hello"}, {"cover": ("c.png", png(), "image/png")})
    response = await api.request("POST", f"{PREFIX}/posts/{post['id']}/upload", token=ann["token"], body=body,
                                 headers=headers)
    assert (response.status, response.json) == (422, REFUSED)
    assert "cover" not in await db.collection("posts").find_by_id(post["id"])
    assert not [p for p in (tmp_path / "storage").rglob("*") if p.is_file()]
