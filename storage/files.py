"""File disks: a local folder and GridFS, behind the same three calls.

Paths are relative (`avatars/3f2c.png`) and checked here again, whatever the
caller did: each segment is a plain name, so nothing escapes the disk.

For clean-up, each disk also lists what it holds (`inventory`) and removes one listed
item (`discard`): stored files, and what a write cut short by a crash left behind.
"""
import asyncio
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from bson import ObjectId
from gridfs.errors import CorruptGridFile, NoFile
from motor.motor_asyncio import AsyncIOMotorGridFSBucket
from pymongo.errors import OperationFailure

from storage.guard import unavailable_as_error

_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_TEMPORARY = re.compile(r"^\.[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.[0-9a-f]{32}\.tmp$")  # LocalDisk.put's


@dataclass(frozen=True)
class StoredFile:
    """One item a disk holds: a file at `path`, or (`temporary`) what an interrupted write left."""
    disk: str
    path: str
    temporary: bool
    written: datetime  # UTC; how old it is decides whether a write may still be under way
    key: Any = field(default=None, compare=False)  # what `discard` needs to find it again


def safe_path(path: str) -> str:
    """`path` if every segment is a plain file name; ValueError otherwise."""
    parts = path.split("/")
    if not parts or any(not _SEGMENT.match(p) or p in (".", "..") or ".." in p for p in parts):
        raise ValueError(f"unsafe storage path: {path!r}")
    return path


class Disk(Protocol):
    name: str

    async def put(self, path: str, data: bytes) -> None: ...
    async def get(self, path: str) -> bytes | None: ...
    async def delete(self, path: str) -> None: ...
    async def inventory(self, deep: bool = True) -> list[StoredFile]: ...
    async def discard(self, item: StoredFile) -> None: ...


class LocalDisk:
    name = "local"

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root).resolve()

    def _file(self, path: str) -> Path:
        target = (self.root / safe_path(path)).resolve()
        if self.root not in target.parents:
            raise ValueError(f"unsafe storage path: {path!r}")
        return target

    async def put(self, path: str, data: bytes) -> None:
        target = self._file(path)

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")  # one per write
            temporary.write_bytes(data)
            temporary.replace(target)  # readers never see half a file
        await asyncio.get_running_loop().run_in_executor(None, write)

    async def get(self, path: str) -> bytes | None:
        target = self._file(path)

        def read() -> bytes | None:
            try:
                return target.read_bytes()
            except (FileNotFoundError, IsADirectoryError):  # gone meanwhile: a replacing upload deleted it
                return None
        return await asyncio.get_running_loop().run_in_executor(None, read)

    async def delete(self, path: str) -> None:
        self._file(path).unlink(missing_ok=True)

    async def inventory(self, deep: bool = True) -> list[StoredFile]:
        """Every file `put` wrote, and the temporary files of writes that never finished;
        anything else in the folder (names `put` never makes, symbolic links) is not listed."""
        def walk() -> list[StoredFile]:
            found = []
            for directory, _, names in os.walk(self.root):  # never follows symbolic links
                for name in names:
                    file = Path(directory, name)
                    path = file.relative_to(self.root).as_posix()
                    temporary = bool(_TEMPORARY.match(name))
                    if file.is_symlink() or not (temporary or _is_safe(path)):
                        continue
                    try:
                        written = datetime.fromtimestamp(file.stat().st_mtime, timezone.utc)
                    except FileNotFoundError:  # renamed or deleted meanwhile
                        continue
                    found.append(StoredFile(self.name, path, temporary, written, file))
            return sorted(found, key=lambda item: item.path)
        return await asyncio.get_running_loop().run_in_executor(None, walk)

    async def discard(self, item: StoredFile) -> None:
        if self.root in Path(item.key).parents:
            Path(item.key).unlink(missing_ok=True)


class GridFSDisk:
    """Files in MongoDB, so every web process on every host sees the same ones."""

    name = "gridfs"

    def __init__(self, motor_database: Any, bucket: str = "files") -> None:
        self._database, self._bucket_name = motor_database, bucket
        self._bucket_instance: AsyncIOMotorGridFSBucket | None = None

    @property
    def _bucket(self) -> AsyncIOMotorGridFSBucket:
        # Made on first use, inside the running loop: making it binds the Motor client to the current loop.
        if self._bucket_instance is None:
            self._bucket_instance = AsyncIOMotorGridFSBucket(self._database, bucket_name=self._bucket_name)
        return self._bucket_instance

    async def _ids(self, path: str) -> list[Any]:
        return [f._id async for f in self._bucket.find({"filename": path})]

    @unavailable_as_error
    async def put(self, path: str, data: bytes) -> None:
        await self._bucket.upload_from_stream(safe_path(path), data)
        # A path names one file: every writer keeps only the highest id, so racing puts agree.
        revisions = sorted(await self._ids(path))
        for file_id in revisions[:-1]:
            await self._delete_id(file_id)

    async def _delete_id(self, file_id: Any) -> None:
        try:
            await self._bucket.delete(file_id)
        except NoFile:  # another writer deleted it first
            pass
        except OperationFailure as error:  # nx-27017 says so with an error instead of NoFile
            if "not found" not in str(error):
                raise

    @unavailable_as_error
    async def get(self, path: str) -> bytes | None:
        try:
            stream = await self._bucket.open_download_stream_by_name(safe_path(path))
            return await stream.read()
        except (NoFile, CorruptGridFile):  # missing, or deleted while being read
            return None

    @unavailable_as_error
    async def delete(self, path: str) -> None:
        for file_id in await self._ids(safe_path(path)):
            await self._delete_id(file_id)

    @unavailable_as_error
    async def inventory(self, deep: bool = True) -> list[StoredFile]:
        """Every path's newest file; as temporary, the older revisions `put` did not get to delete
        and, if `deep` (a scan of every chunk), chunks whose file document is gone (a delete cut
        short between the two)."""
        files = await self._database[f"{self._bucket_name}.files"].find({}, {"filename": 1}).to_list(None)
        newest: dict[str, Any] = {}
        for document in files:
            newest[document["filename"]] = max(newest.get(document["filename"], document["_id"]), document["_id"])
        found = [StoredFile(self.name, d["filename"], d["_id"] != newest[d["filename"]], _written(d["_id"]),
                            d["_id"]) for d in files]
        orphans = await self._orphan_chunks({d["_id"] for d in files}) if deep else {}
        found += [StoredFile(self.name, f"(chunks of file {file_id})", True, _written(last), ("chunks", file_id))
                  for file_id, last in orphans.items()]
        return sorted(found, key=lambda item: item.path)

    async def _orphan_chunks(self, known: set[Any]) -> dict[Any, Any]:
        """files_id -> newest chunk id, for chunks of no known file. The embedded server lists no
        chunks at all (it keeps them out of sight); MongoDB lists every one."""
        orphans: dict[Any, Any] = {}
        async for chunk in self._database[f"{self._bucket_name}.chunks"].find({}, {"files_id": 1}):
            if chunk["files_id"] not in known:
                orphans[chunk["files_id"]] = max(orphans.get(chunk["files_id"], chunk["_id"]), chunk["_id"])
        return orphans

    @unavailable_as_error
    async def discard(self, item: StoredFile) -> None:
        if isinstance(item.key, tuple):
            await self._database[f"{self._bucket_name}.chunks"].delete_many({"files_id": item.key[1]})
        else:
            await self._delete_id(item.key)


def _is_safe(path: str) -> bool:
    try:
        safe_path(path)
    except ValueError:
        return False
    return True


def _written(object_id: Any) -> datetime:
    """When a GridFS document was made: its ObjectId's time (the client made it when writing;
    `uploadDate` comes back as a naive string from the embedded server). Other ids: now."""
    return object_id.generation_time if isinstance(object_id, ObjectId) else datetime.now(timezone.utc)
