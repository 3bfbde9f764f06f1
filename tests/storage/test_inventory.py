"""What each disk lists for clean-up, and what `discard` removes: stored files, and what an
interrupted write left (a local temporary file, an older GridFS revision, orphaned chunks)."""
import os

import gridfs
import pymongo
import pytest

from storage import LocalDisk

EMBEDDED = not os.environ.get("MONGODB_URI")


def listed(items) -> list[tuple[str, bool]]:
    return [(item.path, item.temporary) for item in items]


async def test_a_local_write_cut_short_leaves_a_temporary_file_the_inventory_lists(tmp_path):
    disk = LocalDisk(tmp_path / "files")
    await disk.put("covers/kept.png", b"kept")
    (disk.root / "covers" / "blocked.png").mkdir()  # the final rename fails: the write stops after the temp file
    with pytest.raises(OSError):
        await disk.put("covers/blocked.png", b"lost")
    (disk.root / ".gitkeep").write_text("")                            # names put never makes: not listed
    (disk.root / "covers" / "note with spaces.txt").write_text("")
    (tmp_path / "outside.png").write_bytes(b"x")
    (disk.root / "covers" / "link.png").symlink_to(tmp_path / "outside.png")
    items = await disk.inventory()
    [temporary] = [item for item in items if item.temporary]
    assert temporary.path.startswith("covers/.blocked.png.") and temporary.path.endswith(".tmp")
    assert listed(items) == [(temporary.path, True), ("covers/kept.png", False)]
    await disk.discard(temporary)
    assert listed(await disk.inventory()) == [("covers/kept.png", False)]
    assert (tmp_path / "outside.png").exists() and await disk.get("covers/kept.png") == b"kept"


@pytest.fixture
def bucket(mongodb_uri, db_name):
    client = pymongo.MongoClient(mongodb_uri)
    yield client[db_name], gridfs.GridFSBucket(client[db_name], bucket_name="files")
    client.close()


async def test_gridfs_lists_each_path_once_and_older_revisions_as_temporary(db, bucket):
    _, files = bucket
    older = files.upload_from_stream("covers/a.png", b"old")  # a replacing put stopped before deleting it
    newer = files.upload_from_stream("covers/a.png", b"new")
    disk = db.gridfs()
    await disk.put("covers/b.png", b"b")
    items = await disk.inventory()
    assert listed(items) == [("covers/a.png", True), ("covers/a.png", False), ("covers/b.png", False)]
    assert [item.key for item in items[:2]] == [older, newer]
    await disk.discard(items[0])
    assert listed(await disk.inventory()) == [("covers/a.png", False), ("covers/b.png", False)]
    assert await disk.get("covers/a.png") == b"new"


@pytest.mark.skipif(EMBEDDED, reason="the embedded server lists no GridFS chunks")
async def test_gridfs_lists_chunks_whose_file_document_is_gone(db, bucket):
    database, files = bucket
    lost = files.upload_from_stream("covers/c.png", b"c" * 1000, chunk_size_bytes=300)
    database["files.files"].delete_one({"_id": lost})  # a delete cut short between files and chunks
    disk = db.gridfs()
    [orphans] = await disk.inventory()
    assert (orphans.path, orphans.temporary) == (f"(chunks of file {lost})", True)
    await disk.discard(orphans)
    assert database["files.chunks"].count_documents({}) == 0
    assert await disk.inventory() == []
