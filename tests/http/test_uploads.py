"""Image fields: stored on the local disk or GridFS, served back, replaced, and refused safely."""
import re
from pathlib import Path

import pytest

from service import Repository, field, model, Model
from service.core.declarations.registry import build_registry
from service.core.kernel.errors import DeclarationError
from tests.images import GIF, multipart, png

PROFILE = "/api/restify/profile"


@pytest.fixture(params=["local", "gridfs"])
def config(request, config):
    config["files"]["disk"] = request.param
    config["files"]["max_bytes"] = 4096
    config["server"] = {"max_upload_bytes": 64 * 1024}
    return config


async def _stored_files(restify, db) -> list[str]:
    """Every file on both disks, so a test can prove nothing was left behind."""
    root = Path(restify.settings.get("files", "root"))
    local = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []
    grid = sorted(d["filename"] for d in await db.collection("files.files").find(_all()))
    return local + grid


def _all():
    from storage import Filter
    return Filter()


async def _upload_avatar(api, user, data=None, filename="me.png", fields=None):
    body, headers = multipart({"name": "Ann", "email": user["email"], **(fields or {})},
                              {"avatar": (filename, png() if data is None else data, "image/png")})
    return await api.post(PROFILE, body=body, headers=headers, token=user["token"])


async def test_avatar_is_stored_on_the_configured_disk_and_served(api, restify, db):
    user = await api.register("Ann")
    response = await _upload_avatar(api, user)
    assert response.status == 200, response.body
    url = response.json["attributes"]["avatar"]
    assert url.startswith("/storage/avatars/")
    assert await _stored_files(restify, db) == [url.removeprefix("/storage/")]
    served = await api.get(url)
    assert served.status == 200 and served.body == png()
    assert served.headers["Content-Type"] == "image/png"
    assert served.headers["Cache-Control"] == "public, max-age=3600"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    again = await api.get(url, headers={"If-None-Match": served.headers["Etag"]})
    assert again.status == 304


async def test_replacing_an_avatar_deletes_the_old_file(api, restify, db):
    user = await api.register("Ann")
    first = (await _upload_avatar(api, user)).json["attributes"]["avatar"]
    second_response = await _upload_avatar(api, user, data=GIF, filename="me.gif")
    second = second_response.json["attributes"]["avatar"]
    assert second != first and second.endswith(".gif")
    assert await _stored_files(restify, db) == [second.removeprefix("/storage/")]
    assert (await api.get(first)).status == 404
    assert (await api.get(second)).headers["Content-Type"] == "image/gif"


async def test_post_cover_uses_store_as_name_with_record_id(api, restify, db):
    user = await api.register("Ann")
    post = (await api.post("/api/restify/posts", {"title": "Hello"}, token=user["token"])).json["data"]
    body, headers = multipart({"title": "Hello"}, {"cover": ("x.png", png(), "image/png")})
    response = await api.post(f"/api/restify/posts/{post['id']}", body=body, headers=headers, token=user["token"])
    assert response.status == 200, response.body
    cover = response.json["data"]["attributes"]["cover"]
    assert re.fullmatch(rf"/storage/covers/post-{post['id']}-[0-9a-f]{{12}}\.png", cover), cover
    assert (await api.get(cover)).body == png()


async def test_store_with_multipart_creates_record_and_file(api, restify, db):
    user = await api.register("Ann")
    body, headers = multipart({"title": "With cover", "views": "3", "published": "true"},
                              {"cover": ("x.gif", GIF, "image/gif")})
    response = await api.post("/api/restify/posts", body=body, headers=headers, token=user["token"])
    assert response.status == 201, response.body
    data = response.json["data"]
    assert data["attributes"]["views"] == 3 and data["attributes"]["published"] is True
    assert re.fullmatch(rf"/storage/covers/post-{data['id']}-[0-9a-f]{{12}}\.gif", data["attributes"]["cover"])


@pytest.mark.parametrize("data, message", [
    (b"GIF-but-not-really", "The avatar must be an image."),
    (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "The avatar must be an image."),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "The avatar must be an image."),
    (png(padding=8000), "The avatar may not be greater than 4 kilobytes."),
])
async def test_bad_uploads_are_422_and_leave_nothing(api, restify, db, data, message):
    user = await api.register("Ann")
    response = await _upload_avatar(api, user, data=data, filename="photo.png")
    assert response.status == 422
    assert response.json["errors"] == {"avatar": [message]}
    assert await _stored_files(restify, db) == []
    assert (await db.collection("users").find_by_id(user["id"])).get("avatar") is None


async def test_upload_with_other_invalid_field_writes_no_file_and_changes_nothing(api, restify, db):
    user = await api.register("Ann")
    response = await _upload_avatar(api, user, fields={"email": "not-an-email"})
    assert response.status == 422
    assert response.json["errors"] == {"email": ["The email must be a valid email address."]}
    assert await _stored_files(restify, db) == []
    stored = await db.collection("users").find_by_id(user["id"])
    assert stored["email"] == user["email"] and stored.get("avatar") is None


async def test_body_over_the_upload_limit_is_413(api, restify, db):
    user = await api.register("Ann")
    response = await _upload_avatar(api, user, data=png(padding=70 * 1024))
    assert response.status == 413
    assert response.json == {"message": "The request body is too large."}
    assert await _stored_files(restify, db) == []


async def test_uploaded_file_name_never_reaches_the_disk(api, restify, db):
    user = await api.register("Ann")
    response = await _upload_avatar(api, user, filename="../../../../etc/passwd.png")
    url = response.json["attributes"]["avatar"]
    assert "passwd" not in url and ".." not in url
    assert await _stored_files(restify, db) == [url.removeprefix("/storage/")]


@pytest.mark.parametrize("url", ["/storage/../setup.py", "/storage/avatars/..%2F..%2Fsetup.py",
                                  "/storage/avatars/.hidden", "/storage/nothing/here.png"])
async def test_file_route_refuses_traversal_and_unknown_files(api, url):
    response = await api.get(url)
    assert response.status == 404
    assert response.json == {"message": "Not found."}


class Photo(Model):
    pass


@pytest.mark.parametrize("declare, message", [
    (lambda: field("photo").image().store_as("../x.png"), "store_as('../x.png') is not a plain file name"),
    (lambda: field("photo").image().store_as("a/b.png"), "store_as('a/b.png') is not a plain file name"),
    (lambda: field("photo").image().path("../up"), "path('../up') must be plain folder names"),
    (lambda: field("photo").image().disk("s3"), "unknown disk 's3'"),
])
def test_unsafe_file_declarations_fail_at_start_up(declare, message):
    @model(Photo)
    class PhotoRepository(Repository):
        def fields(self, request):
            return [declare()]

    with pytest.raises(DeclarationError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        build_registry([PhotoRepository], {})
