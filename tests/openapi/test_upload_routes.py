"""The multipart writes the OpenAPI document gives their own paths really work: store and update
with files on `<r>/upload` and `<r>/<id>/upload`, the profile on `profile/upload`; the old
routes still read multipart for existing clients."""
from tests.images import multipart, png

PREFIX = "/api/restify"


def _cover_form(title: str) -> tuple[bytes, dict[str, str]]:
    return multipart({"title": title}, {"cover": ("c.png", png(), "image/png")})


async def _assert_serves_the_png(api, url: str) -> None:
    assert url.startswith("/storage/covers/") or url.startswith("/storage/avatars/"), url
    served = await api.get(url)
    assert (served.status, served.body) == (200, png())


async def test_store_with_files_on_its_own_path(api, ann):
    body, headers = _cover_form("Uploaded")
    response = await api.post(f"{PREFIX}/posts/upload", body=body, headers=headers, token=ann["token"])
    assert response.status == 201, response.body
    data = response.json["data"]
    assert (data["attributes"]["title"], data["attributes"]["user_id"]) == ("Uploaded", ann["id"])
    assert response.headers["Location"].endswith(f"{PREFIX}/posts/{data['id']}")
    await _assert_serves_the_png(api, data["attributes"]["cover"])
    shown = await api.get(f"{PREFIX}/posts/{data['id']}", token=ann["token"])
    assert shown.json["data"]["attributes"] == data["attributes"]


async def test_update_with_files_on_its_own_path(api, ann):
    created = await api.post(f"{PREFIX}/posts", {"title": "Plain", "views": 2}, token=ann["token"])
    post_id = created.json["data"]["id"]
    body, headers = _cover_form("Covered")
    response = await api.post(f"{PREFIX}/posts/{post_id}/upload", body=body, headers=headers, token=ann["token"])
    assert response.status == 200, response.body
    attributes = response.json["data"]["attributes"]
    assert (attributes["title"], attributes["views"]) == ("Covered", 2)
    await _assert_serves_the_png(api, attributes["cover"])


async def test_profile_with_files_on_its_own_path(api, ann):
    body, headers = multipart({"name": "Ann Again", "email": ann["email"]},
                              {"avatar": ("me.png", png(), "image/png")})
    response = await api.post(f"{PREFIX}/profile/upload", body=body, headers=headers, token=ann["token"])
    assert response.status == 200, response.body
    assert (response.json["id"], response.json["attributes"]["name"]) == (ann["id"], "Ann Again")
    await _assert_serves_the_png(api, response.json["attributes"]["avatar"])


async def test_upload_paths_keep_the_rules_of_their_operations(api, ann, bob):
    created = await api.post(f"{PREFIX}/posts", {"title": "Ann's"}, token=ann["token"])
    post_id = created.json["data"]["id"]
    body, headers = _cover_form("Taken")
    refused = await api.post(f"{PREFIX}/posts/{post_id}/upload", body=body, headers=headers, token=bob["token"])
    assert (refused.status, refused.json) == (403, {"message": "This action is unauthorized."})
    body, headers = multipart({"views": "1"})
    invalid = await api.post(f"{PREFIX}/posts/upload", body=body, headers=headers, token=ann["token"])
    assert (invalid.status, invalid.json["errors"]) == (422, {"title": ["The title field is required."]})
    guest = await api.post(f"{PREFIX}/profile/upload", body=body, headers=headers)
    assert (guest.status, guest.json) == (401, {"message": "Unauthenticated."})
    missing = await api.post(f"{PREFIX}/posts/{'0' * 24}/upload", body=body, headers=headers, token=ann["token"])
    assert (missing.status, missing.json) == (404, {"message": "Not found."})
    listed = await api.get(f"{PREFIX}/posts/upload", token=ann["token"])  # a write-only route
    assert (listed.status, listed.json) == (405, {"message": "Method not allowed."})


async def test_old_routes_still_read_multipart(api, ann):
    body, headers = _cover_form("Old client")
    created = await api.post(f"{PREFIX}/posts", body=body, headers=headers, token=ann["token"])
    assert created.status == 201, created.body
    await _assert_serves_the_png(api, created.json["data"]["attributes"]["cover"])
    body, headers = _cover_form("Old client, again")
    updated = await api.post(f"{PREFIX}/posts/{created.json['data']['id']}", body=body, headers=headers,
                             token=ann["token"])
    assert (updated.status, updated.json["data"]["attributes"]["title"]) == (200, "Old client, again")
