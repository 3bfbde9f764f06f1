"""Create, read, update and delete over REST, checked against what the database holds."""
import asyncio
import re
import uuid

import pytest

import storage

PREFIX = "/api/restify"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
INVALID = "The given data was invalid."


# -- helpers ------------------------------------------------------------------
@pytest.fixture
def base(http_server_client):
    return http_server_client.get_url("")


def flags(show: bool, store: bool, update: bool, delete: bool, version: int = 1) -> dict:
    """A record's `meta`: its authorization flags and its version (1 once created)."""
    return {"authorizedToShow": show, "authorizedToStore": store,
            "authorizedToUpdate": update, "authorizedToDelete": delete, "version": version}


def invalid(**errors: str) -> dict:
    return {"message": INVALID, "errors": {name: [message] for name, message in errors.items()}}


async def create_post(api, user, **attributes) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", **attributes}, token=user["token"])
    assert response.status == 201, response.body
    return response.json["data"]


async def seed_posts(db, count: int) -> list[str]:
    """Inserts `count` posts straight into the database; returns their ids in insertion order."""
    posts = db.collection("posts")
    return [(await posts.insert({"title": f"Post {n}", "views": n, "published": False}))["id"]
            for n in range(count)]


async def count(db, name: str) -> int:
    return await db.collection(name).count(storage.Filter())


def multipart(fields: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
             for name, value in fields.items()]
    body = ("".join(parts) + f"--{boundary}--\r\n").encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


# -- index ----------------------------------------------------------------------
async def test_index_of_an_empty_collection_has_the_full_envelope(api, base):
    response = await api.get(f"{PREFIX}/posts")
    path = f"{base}{PREFIX}/posts"
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert response.json == {
        "meta": {"current_page": 1, "from": None, "last_page": 1, "path": path, "per_page": 15,
                 "to": None, "total": 0, "next_cursor": None, "prev_cursor": None},
        "links": {"first": f"{path}?page=1", "last": f"{path}?page=1", "prev": None, "next": None,
                  "path": path},
        "data": [],
    }


async def test_index_pages_with_per_page_and_links_keep_other_parameters(api, db, base):
    ids = await seed_posts(db, 5)
    response = await api.get(f"{PREFIX}/posts?perPage=2&page=2")
    path = f"{base}{PREFIX}/posts"
    assert response.status == 200
    body = response.json
    assert body["meta"].pop("next_cursor") and body["meta"].pop("prev_cursor")
    assert body["meta"] == {"current_page": 2, "from": 3, "last_page": 3, "path": path, "per_page": 2,
                            "to": 4, "total": 5}
    assert body["links"] == {
        "first": f"{path}?perPage=2&page=1",
        "last": f"{path}?perPage=2&page=3",
        "prev": f"{path}?perPage=2&page=1",
        "next": f"{path}?perPage=2&page=3",
        "path": path,
    }
    assert [row["id"] for row in body["data"]] == ids[2:4]


async def test_index_last_page_holds_the_remainder_and_has_no_next_link(api, db):
    ids = await seed_posts(db, 5)
    body = (await api.get(f"{PREFIX}/posts?perPage=2&page=3")).json
    assert [row["id"] for row in body["data"]] == ids[4:]
    assert (body["meta"]["from"], body["meta"]["to"], body["links"]["next"]) == (5, 5, None)


async def test_index_per_page_defaults_to_15(api, db):
    ids = await seed_posts(db, 16)
    first = (await api.get(f"{PREFIX}/posts")).json
    assert first["meta"]["per_page"] == 15
    assert first["meta"]["last_page"] == 2
    assert first["meta"]["total"] == 16
    assert [row["id"] for row in first["data"]] == ids[:15]
    second = (await api.get(f"{PREFIX}/posts?page=2")).json
    assert [row["id"] for row in second["data"]] == ids[15:]


async def test_index_rows_are_resource_objects_with_authorization_flags(api, ann):
    post = await create_post(api, ann)
    guest_rows = (await api.get(f"{PREFIX}/posts")).json["data"]
    owner_rows = (await api.get(f"{PREFIX}/posts", token=ann["token"])).json["data"]
    assert guest_rows == [{**post, "meta": flags(True, False, False, False)}]
    assert owner_rows == [{**post, "meta": flags(True, True, True, True)}]


@pytest.mark.parametrize("query, message", [
    ("page=0", "The page parameter must be a positive integer."),
    ("page=abc", "The page parameter must be a positive integer."),
    ("perPage=-1", "The perPage parameter must be a positive integer."),
    ("perPage=2.5", "The perPage parameter must be a positive integer."),
])
async def test_index_malformed_page_numbers_are_400(api, query, message):
    name = query.split("=")[0]
    response = await api.get(f"{PREFIX}/posts?{query}")
    assert response.status == 400
    assert response.json == {"message": message, "errors": {name: [f"The {name} must be a positive integer."]}}


# -- show -------------------------------------------------------------------------
async def test_show_wraps_the_resource_object_in_data(api, ann):
    created = await create_post(api, ann, body="Text", views=3, published=True)
    response = await api.get(f"{PREFIX}/posts/{created['id']}")
    assert response.status == 200
    data = response.json["data"]
    assert set(response.json) == {"data"}
    assert data == {
        "id": created["id"],
        "type": "posts",
        "attributes": {
            "title": "Hello", "body": "Text", "views": 3, "published": True, "user_id": ann["id"],
            "cover": None, "created_at": data["attributes"]["created_at"],
            "updated_at": data["attributes"]["updated_at"],
        },
        "meta": flags(True, False, False, False),
    }
    assert ISO.match(data["attributes"]["created_at"])
    assert data["attributes"]["updated_at"] == data["attributes"]["created_at"]


@pytest.mark.parametrize("viewer, expected", [
    ("guest", flags(True, False, False, False)),
    ("owner", flags(True, True, True, True)),
    ("other", flags(True, True, False, False)),
])
async def test_show_meta_flags_depend_on_who_asks(api, ann, bob, viewer, expected):
    created = await create_post(api, ann)
    token = {"guest": None, "owner": ann["token"], "other": bob["token"]}[viewer]
    response = await api.get(f"{PREFIX}/posts/{created['id']}", token=token)
    assert response.status == 200
    assert response.json["data"]["meta"] == expected


async def test_show_of_a_missing_record_is_404(api):
    response = await api.get(f"{PREFIX}/posts/{'0' * 24}")
    assert (response.status, response.json) == (404, {"message": "Not found."})


# -- store --------------------------------------------------------------------------
async def test_store_answers_201_with_location_and_the_stored_resource(api, db, ann, base):
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", "body": "Text"}, token=ann["token"])
    assert response.status == 201
    data = response.json["data"]
    assert set(response.json) == {"data"}
    assert response.headers["Location"] == f"{base}{PREFIX}/posts/{data['id']}"
    assert data["type"] == "posts"
    assert data["meta"] == flags(True, True, True, True)
    assert data["attributes"] == {
        "title": "Hello", "body": "Text", "views": 0, "published": False, "user_id": ann["id"], "cover": None,
        "created_at": data["attributes"]["created_at"], "updated_at": data["attributes"]["created_at"],
    }
    stored = await db.collection("posts").find_by_id(data["id"])
    assert set(stored) == {"id", "title", "body", "views", "published", "user_id", "created_at", "updated_at",
                           "tag_ids", storage.VERSION}  # a BelongsToMany key is stored as [] when not given
    assert (stored["title"], stored["body"], stored["views"], stored["published"], stored["user_id"]) == \
        ("Hello", "Text", 0, False, ann["id"])


async def test_store_applies_defaults_views_0_and_published_false(api, db, ann):
    data = await create_post(api, ann)
    stored = await db.collection("posts").find_by_id(data["id"])
    assert stored["views"] == 0 and stored["published"] is False
    assert "body" not in stored


async def test_store_ignores_undeclared_keys_and_never_stores_them(api, db, ann):
    body = {"title": "Hello", "rogue": 1, "id": "0" * 24, "_id": "0" * 24, "created_at": "1999-01-01T00:00:00Z",
            "updated_at": "1999-01-01T00:00:00Z", "type": "users", "attributes": {"title": "x"}, "meta": {}}
    response = await api.post(f"{PREFIX}/posts", body, token=ann["token"])
    assert response.status == 201
    data = response.json["data"]
    assert data["id"] != "0" * 24
    assert not data["attributes"]["created_at"].startswith("1999")
    stored = await db.collection("posts").find_by_id(data["id"])
    assert set(stored) == {"id", "title", "views", "published", "user_id", "created_at", "updated_at", "tag_ids",
                           storage.VERSION}
    assert not stored["created_at"].startswith("1999")
    assert await count(db, "posts") == 1


@pytest.mark.parametrize("claimed", ["someone-else", "0" * 24, None, 42, {"$ne": ""}])
async def test_store_records_the_acting_user_as_owner_whatever_the_body_says(api, db, ann, claimed):
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", "user_id": claimed}, token=ann["token"])
    assert response.status == 201
    assert response.json["data"]["attributes"]["user_id"] == ann["id"]
    stored = await db.collection("posts").find_by_id(response.json["data"]["id"])
    assert stored["user_id"] == ann["id"]


async def test_store_coerces_numeric_and_boolean_strings(api, db, ann):
    data = await create_post(api, ann, views="7", published="true")
    stored = await db.collection("posts").find_by_id(data["id"])
    assert (stored["views"], stored["published"]) == (7, True)
    assert (data["attributes"]["views"], data["attributes"]["published"]) == (7, True)


async def test_store_without_a_title_is_422_and_writes_nothing(api, db, ann):
    response = await api.post(f"{PREFIX}/posts", {"body": "Text"}, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.")
    assert await count(db, "posts") == 0


async def test_store_reports_every_invalid_field_at_once(api, db, ann):
    response = await api.post(f"{PREFIX}/posts", {"title": "", "views": -1, "published": "maybe"},
                              token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.", views="The views must be at least 0.",
                                    published="The published field must be true or false.")
    assert await count(db, "posts") == 0


# -- update: PUT ----------------------------------------------------------------------
async def test_put_updates_and_returns_the_resource(api, db, ann):
    created = await create_post(api, ann, body="Old")
    response = await api.put(f"{PREFIX}/posts/{created['id']}", {"title": "New", "views": 9}, token=ann["token"])
    assert response.status == 200
    data = response.json["data"]
    assert set(response.json) == {"data"}
    assert data["id"] == created["id"] and data["type"] == "posts"
    assert data["meta"] == flags(True, True, True, True, version=2)
    assert (data["attributes"]["title"], data["attributes"]["views"], data["attributes"]["body"]) == ("New", 9, "Old")
    stored = await db.collection("posts").find_by_id(created["id"])
    assert (stored["title"], stored["views"], stored["body"], stored["user_id"]) == ("New", 9, "Old", ann["id"])


@pytest.mark.parametrize("body", [{}, {"body": "Only a body"}, {"title": None}, {"title": ""}])
async def test_put_validates_every_field_so_a_missing_title_is_422(api, db, ann, body):
    created = await create_post(api, ann, body="Old")
    before = await db.collection("posts").find_by_id(created["id"])
    response = await api.put(f"{PREFIX}/posts/{created['id']}", body, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.")
    assert await db.collection("posts").find_by_id(created["id"]) == before


async def test_put_cannot_change_the_owner(api, db, ann, bob):
    created = await create_post(api, ann)
    response = await api.put(f"{PREFIX}/posts/{created['id']}", {"title": "New", "user_id": bob["id"]},
                             token=ann["token"])
    assert response.status == 200
    assert (await db.collection("posts").find_by_id(created["id"]))["user_id"] == ann["id"]


# -- update: PATCH ----------------------------------------------------------------------
async def test_patch_changes_only_the_fields_sent(api, db, ann):
    created = await create_post(api, ann, body="Old body", views=3)
    before = await db.collection("posts").find_by_id(created["id"])
    response = await api.patch(f"{PREFIX}/posts/{created['id']}", {"views": 10}, token=ann["token"])
    assert response.status == 200
    assert response.json["data"]["attributes"]["views"] == 10
    after = await db.collection("posts").find_by_id(created["id"])
    changed = ("views", "updated_at", storage.VERSION)
    unchanged = {k: v for k, v in before.items() if k not in changed}
    assert {k: v for k, v in after.items() if k not in changed} == unchanged
    assert (after["views"], after[storage.VERSION]) == (10, 2)


async def test_patch_without_a_title_keeps_the_title(api, db, ann):
    created = await create_post(api, ann, title="Kept")
    response = await api.patch(f"{PREFIX}/posts/{created['id']}", {"body": "New body"}, token=ann["token"])
    assert response.status == 200
    stored = await db.collection("posts").find_by_id(created["id"])
    assert (stored["title"], stored["body"]) == ("Kept", "New body")


async def test_patch_still_validates_the_fields_it_is_sent(api, db, ann):
    created = await create_post(api, ann)
    before = await db.collection("posts").find_by_id(created["id"])
    response = await api.patch(f"{PREFIX}/posts/{created['id']}", {"title": ""}, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.")
    assert await db.collection("posts").find_by_id(created["id"]) == before


async def test_patch_can_clear_a_nullable_field_and_set_a_boolean(api, db, ann):
    created = await create_post(api, ann, body="Text")
    response = await api.patch(f"{PREFIX}/posts/{created['id']}", {"body": None, "published": True},
                               token=ann["token"])
    assert response.status == 200
    assert response.json["data"]["attributes"]["body"] is None
    assert response.json["data"]["attributes"]["published"] is True
    stored = await db.collection("posts").find_by_id(created["id"])
    assert stored["body"] is None and stored["published"] == True  # noqa: E712 - the server may keep 1


async def test_update_changes_updated_at_but_never_created_at(api, db, ann):
    created = await create_post(api, ann)
    stored_before = await db.collection("posts").find_by_id(created["id"])
    await asyncio.sleep(0.01)
    response = await api.patch(f"{PREFIX}/posts/{created['id']}", {"views": 1, "created_at": "1999-01-01"},
                               token=ann["token"])
    assert response.status == 200
    attributes = response.json["data"]["attributes"]
    assert attributes["created_at"] == created["attributes"]["created_at"]
    assert ISO.match(attributes["updated_at"]), attributes["updated_at"]
    assert attributes["updated_at"] > created["attributes"]["updated_at"]
    stored_after = await db.collection("posts").find_by_id(created["id"])
    assert stored_after["created_at"] == stored_before["created_at"]
    assert stored_after["updated_at"] == attributes["updated_at"] != stored_before["updated_at"]


# -- update: POST to a record -------------------------------------------------------------
async def test_post_to_a_record_with_json_updates_like_put(api, db, ann):
    created = await create_post(api, ann, body="Old")
    response = await api.post(f"{PREFIX}/posts/{created['id']}", {"title": "New"}, token=ann["token"])
    assert response.status == 200
    assert response.json["data"]["attributes"]["title"] == "New"
    stored = await db.collection("posts").find_by_id(created["id"])
    assert (stored["title"], stored["body"]) == ("New", "Old")


async def test_post_to_a_record_with_json_requires_the_title_like_put(api, db, ann):
    created = await create_post(api, ann)
    before = await db.collection("posts").find_by_id(created["id"])
    response = await api.post(f"{PREFIX}/posts/{created['id']}", {"body": "x"}, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.")
    assert await db.collection("posts").find_by_id(created["id"]) == before


async def test_post_to_a_record_accepts_multipart_form_data(api, db, ann):
    created = await create_post(api, ann)
    body, headers = multipart({"title": "From a form", "views": "7", "published": "1", "rogue": "x"})
    response = await api.post(f"{PREFIX}/posts/{created['id']}", body=body, headers=headers, token=ann["token"])
    assert response.status == 200, response.body
    attributes = response.json["data"]["attributes"]
    assert (attributes["title"], attributes["views"], attributes["published"]) == ("From a form", 7, True)
    stored = await db.collection("posts").find_by_id(created["id"])
    assert (stored["title"], stored["views"], stored["published"]) == ("From a form", 7, True)
    assert "rogue" not in stored


async def test_post_to_a_record_with_multipart_still_requires_the_title(api, db, ann):
    created = await create_post(api, ann)
    before = await db.collection("posts").find_by_id(created["id"])
    body, headers = multipart({"body": "no title"})
    response = await api.post(f"{PREFIX}/posts/{created['id']}", body=body, headers=headers, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(title="The title field is required.")
    assert await db.collection("posts").find_by_id(created["id"]) == before


async def test_post_to_a_record_accepts_a_urlencoded_form(api, db, ann):
    created = await create_post(api, ann)
    response = await api.post(f"{PREFIX}/posts/{created['id']}", body="title=Encoded&views=2", token=ann["token"],
                              headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status == 200
    stored = await db.collection("posts").find_by_id(created["id"])
    assert (stored["title"], stored["views"]) == ("Encoded", 2)


# -- delete ---------------------------------------------------------------------------------
async def test_delete_answers_204_with_an_empty_body_and_removes_the_record(api, db, ann):
    created = await create_post(api, ann)
    other = await create_post(api, ann, title="Stays")
    response = await api.delete(f"{PREFIX}/posts/{created['id']}", token=ann["token"])
    assert response.status == 204
    assert response.body == b""
    assert await db.collection("posts").find_by_id(created["id"]) is None
    assert await db.collection("posts").find_by_id(other["id"]) is not None
    again = await api.delete(f"{PREFIX}/posts/{created['id']}", token=ann["token"])
    assert (again.status, again.json) == (404, {"message": "Not found."})
    shown = await api.get(f"{PREFIX}/posts/{created['id']}")
    assert (shown.status, shown.json) == (404, {"message": "Not found."})


# -- tags -------------------------------------------------------------------------------------
async def test_tag_names_are_unique_on_store(api, db, ann):
    first = await api.post(f"{PREFIX}/tags", {"name": "python"}, token=ann["token"])
    assert first.status == 201
    second = await api.post(f"{PREFIX}/tags", {"name": "python"}, token=ann["token"])
    assert second.status == 422
    assert second.json == invalid(name="The name has already been taken.")
    assert await count(db, "tags") == 1


async def test_tag_names_are_unique_on_update_but_a_tag_may_keep_its_own(api, db, ann):
    python = (await api.post(f"{PREFIX}/tags", {"name": "python"}, token=ann["token"])).json["data"]
    rust = (await api.post(f"{PREFIX}/tags", {"name": "rust"}, token=ann["token"])).json["data"]
    taken = await api.put(f"{PREFIX}/tags/{rust['id']}", {"name": "python"}, token=ann["token"])
    assert taken.status == 422
    assert taken.json == invalid(name="The name has already been taken.")
    assert (await db.collection("tags").find_by_id(rust["id"]))["name"] == "rust"
    kept = await api.put(f"{PREFIX}/tags/{python['id']}", {"name": "python"}, token=ann["token"])
    assert kept.status == 200


async def make_tags(api, user, *names: str) -> list[str]:
    return [(await api.post(f"{PREFIX}/tags", {"name": name}, token=user["token"])).json["data"]["id"]
            for name in names]


async def test_concurrent_tags_with_the_same_name_store_exactly_one(api, db, ann):
    responses = await asyncio.gather(*(api.post(f"{PREFIX}/tags", {"name": "race"}, token=ann["token"])
                                       for _ in range(3)))
    assert sorted(r.status for r in responses) == [201, 422, 422]
    assert all(r.json["message"] == INVALID for r in responses if r.status == 422)
    assert await count(db, "tags") == 1


async def test_concurrent_renames_to_one_name_leave_exactly_one_tag_with_it(api, db, ann):
    ids = await make_tags(api, ann, "a", "b")
    responses = await asyncio.gather(*(api.put(f"{PREFIX}/tags/{id}", {"name": "z"}, token=ann["token"])
                                       for id in ids))
    assert [r.status for r in responses].count(200) == 1
    names = sorted(tag["name"] for tag in await db.collection("tags").find(storage.Filter()))
    assert names in (["a", "z"], ["b", "z"])


class TestConcurrentUniqueUpdate:
    """Two users taking one email at once: the index refuses the loser, who must get a 422 too."""

    @pytest.fixture
    def config(self, config):
        # A realistic password hash cost holds both updates between their uniqueness check and their write,
        # so the loser is refused by the unique index rather than by the validation query.
        return {**config, "auth": {"argon2_time_cost": 2, "argon2_memory_kib": 19456}}

    async def take_one_email(self, api, db):
        users = [await api.register(name) for name in ("Ann", "Bob")]
        change = {"email": "taken@example.com", "password": "new-secret", "password_confirmation": "new-secret",
                  "current_password": "secret-pass"}
        responses = await asyncio.gather(*(api.patch(f"{PREFIX}/users/{u['id']}", change, token=u["token"])
                                           for u in users))
        return users, responses

    async def test_only_one_user_gets_the_email_and_the_other_is_told_it_is_taken(self, api, db):
        users, responses = await self.take_one_email(api, db)
        assert sorted(r.status for r in responses) == [200, 422]
        rejected = next(r for r in responses if r.status == 422)
        assert rejected.json == invalid(email="The email has already been taken.")
        emails = [(await db.collection("users").find_by_id(u["id"]))["email"] for u in users]
        assert emails.count("taken@example.com") == 1


@pytest.mark.parametrize("body, errors", [
    ({}, {"name": "The name field is required."}),
    ({"name": "x" * 51}, {"name": "The name may not be greater than 50 characters."}),
])
async def test_tag_store_validates_the_name(api, db, ann, body, errors):
    response = await api.post(f"{PREFIX}/tags", body, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(**errors)
    assert await count(db, "tags") == 0


# -- comments -----------------------------------------------------------------------------------
async def test_comment_store_records_the_user_and_the_post(api, db, ann, bob):
    post = await create_post(api, ann)
    response = await api.post(f"{PREFIX}/comments", {"body": "Nice", "post_id": post["id"], "user_id": ann["id"]},
                              token=bob["token"])
    assert response.status == 201
    data = response.json["data"]
    assert data["type"] == "comments"
    assert {k: data["attributes"][k] for k in ("body", "post_id", "user_id")} == \
        {"body": "Nice", "post_id": post["id"], "user_id": bob["id"]}
    stored = await db.collection("comments").find_by_id(data["id"])
    assert (stored["body"], stored["post_id"], stored["user_id"]) == ("Nice", post["id"], bob["id"])


async def test_comment_store_requires_a_user(api, db, ann):
    post = await create_post(api, ann)
    response = await api.post(f"{PREFIX}/comments", {"body": "Nice", "post_id": post["id"]})
    assert (response.status, response.json) == (401, {"message": "Unauthenticated."})
    assert await count(db, "comments") == 0


@pytest.mark.parametrize("post_id", ["0" * 24, "not-an-id", "", None])
async def test_comment_store_requires_an_existing_post(api, db, ann, post_id):
    response = await api.post(f"{PREFIX}/comments", {"body": "Nice", "post_id": post_id}, token=ann["token"])
    assert response.status == 422
    message = "The post id field is required." if not post_id else "The selected post id is invalid."
    assert response.json == invalid(post_id=message)
    assert await count(db, "comments") == 0


async def test_comment_store_requires_a_body(api, db, ann):
    post = await create_post(api, ann)
    response = await api.post(f"{PREFIX}/comments", {"post_id": post["id"]}, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(body="The body field is required.")
    assert await count(db, "comments") == 0


async def test_comment_update_cannot_point_at_a_missing_post(api, db, ann):
    post = await create_post(api, ann)
    comment = (await api.post(f"{PREFIX}/comments", {"body": "Nice", "post_id": post["id"]},
                              token=ann["token"])).json["data"]
    response = await api.patch(f"{PREFIX}/comments/{comment['id']}", {"post_id": "0" * 24}, token=ann["token"])
    assert response.status == 422
    assert response.json == invalid(post_id="The selected post id is invalid.")
    assert (await db.collection("comments").find_by_id(comment["id"]))["post_id"] == post["id"]
