"""What crashes leave on the disks: `restify storage:prune` lists it (and deletes it with
`--apply`), and `restify serve` removes stale temporary files at start. The leftovers are made
the way interrupted writes leave them: a local upload's `.name.<hex>.tmp`, an older GridFS
revision a replacing upload did not get to delete, a file whose record was never stored."""
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import gridfs
import pymongo
import pytest
from bson import ObjectId

from tests.processes import Server, request, restify

OLD = datetime.now(timezone.utc) - timedelta(hours=2)  # past files.stale_after_seconds (1 h)
TEMP_HEX = "0123456789abcdef0123456789abcdef"


def id_at(moment: datetime) -> ObjectId:
    """A fresh ObjectId made at `moment` (as a client writing then would have made it)."""
    return ObjectId(ObjectId.from_datetime(moment).binary[:4] + ObjectId().binary[4:])


class Disks:
    """The app's local folder and GridFS bucket, seen directly."""

    def __init__(self, app_dir: Path, env: dict[str, str]) -> None:
        self.root = app_dir / "var" / "storage"
        self.client = pymongo.MongoClient(env["MONGODB_URI"])
        self.db = self.client[env["RESTIFY_DATABASE_NAME"]]
        self.bucket = gridfs.GridFSBucket(self.db, bucket_name="files")

    def write(self, path: str, data: bytes = b"image", written: datetime | None = None) -> None:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        if written is not None:
            os.utime(file, (written.timestamp(), written.timestamp()))

    def local(self) -> set[str]:
        return {p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()}

    def put(self, path: str, data: bytes, written: datetime) -> ObjectId:
        file_id = id_at(written)
        self.bucket.upload_from_stream_with_id(file_id, path, data)
        return file_id

    def gridfs(self) -> list[tuple[str, ObjectId]]:
        return sorted((d["filename"], d["_id"]) for d in self.db["files.files"].find())


@pytest.fixture
def disks(app_copy, database_env):
    seen = Disks(app_copy, database_env)
    yield seen
    seen.client.close()


@pytest.fixture
def leftovers(disks):
    """Records pointing at some files; beside them, what crashes left (old) and uploads in progress (new)."""
    disks.db.posts.insert_many([{"title": "local", "cover": "/storage/covers/kept.png"},
                                {"title": "gridfs", "cover": "/storage/covers/g-kept.png"}])
    disks.db.users.insert_one({"name": "Ann", "avatar": "/storage/avatars/a.png"})
    disks.write("covers/kept.png", written=OLD)
    disks.write("avatars/a.png", written=OLD)
    disks.write(".gitkeep", written=OLD)                                     # not something uploads write
    disks.write(f"covers/.kept.png.{TEMP_HEX}.tmp", written=OLD)            # a killed upload's temp file
    disks.write("covers/orphan.png", written=OLD)                            # its record was never stored
    disks.write("covers/fresh.png")                                          # an upload under way...
    disks.write(f"covers/.fresh.png.{TEMP_HEX}.tmp")                         # ... and its temp file
    old_revision = disks.put("covers/g-kept.png", b"old", OLD)               # replaced, not yet deleted
    newest = disks.put("covers/g-kept.png", b"new", OLD + timedelta(minutes=1))
    lost = disks.put("covers/g-orphan.png", b"lost", OLD)
    return {"old_revision": old_revision, "newest": newest, "lost": lost}


LISTED = [
    f"local\ttemp\tcovers/.kept.png.{TEMP_HEX}.tmp",
    "local\tunreferenced\tcovers/orphan.png",
    "gridfs\ttemp\tcovers/g-kept.png",
    "gridfs\tunreferenced\tcovers/g-orphan.png",
]


def test_prune_lists_what_no_record_needs_and_changes_nothing(app_copy, database_env, disks, leftovers):
    local, stored = disks.local(), disks.gridfs()
    listed = restify("storage:prune", env=database_env, app_dir=app_copy)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [*LISTED, "4 file(s) to delete; run again with --apply to delete them."]
    assert (disks.local(), disks.gridfs()) == (local, stored)


def test_prune_apply_deletes_exactly_what_it_lists(app_copy, database_env, disks, leftovers):
    applied = restify("storage:prune", "--apply", env=database_env, app_dir=app_copy)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines() == [*LISTED, "Deleted 4 file(s)."]
    assert disks.local() == {"covers/kept.png", "avatars/a.png", ".gitkeep", "covers/fresh.png",
                             f"covers/.fresh.png.{TEMP_HEX}.tmp"}
    assert disks.gridfs() == [("covers/g-kept.png", leftovers["newest"])]
    assert disks.bucket.open_download_stream_by_name("covers/g-kept.png").read() == b"new"
    again = restify("storage:prune", env=database_env, app_dir=app_copy)
    assert again.stdout.splitlines() == ["Nothing to prune."]
    # --older-than 0: the writes under way count too (for a clean-up with every server stopped)
    everything = restify("storage:prune", "--older-than", "0", env=database_env, app_dir=app_copy)
    assert everything.stdout.splitlines() == [f"local\ttemp\tcovers/.fresh.png.{TEMP_HEX}.tmp",
                                              "local\tunreferenced\tcovers/fresh.png",
                                              "2 file(s) to delete; run again with --apply to delete them."]


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_prune_refuses_a_bad_age(app_copy, database_env, value):
    refused = restify("storage:prune", "--older-than", value, env=database_env, app_dir=app_copy)
    assert refused.returncode == 2
    assert "must be a number of seconds, 0 or more" in refused.stderr


def test_serve_removes_stale_temporary_files_at_start(app_copy, database_env, disks, leftovers, tmp_path):
    server = Server(app_copy, database_env, log_dir=tmp_path)
    try:
        assert disks.local() == {"covers/kept.png", "avatars/a.png", ".gitkeep", "covers/orphan.png",
                                 "covers/fresh.png", f"covers/.fresh.png.{TEMP_HEX}.tmp"}
        assert disks.gridfs() == [("covers/g-kept.png", leftovers["newest"]), ("covers/g-orphan.png", leftovers["lost"])]
        assert request(server.port, "GET", "/api/restify/posts")[0] == 200
    finally:
        assert server.stop() == 0
