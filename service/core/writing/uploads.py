"""Image uploads: content checks, safe names, and writing only after validation.

An upload is accepted when its bytes are a PNG, JPEG, GIF or WebP image (the
name and declared type are ignored), it fits `files.max_bytes`, and the whole
request validated. Files are written after that, so a rejected request leaves
nothing behind; the operation deletes them again if the record write fails.
"""
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from service.core.declarations import Field, describe
from storage import Filter, StoredFile

if TYPE_CHECKING:
    from service.core.declarations import Restify

CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


@dataclass(frozen=True)
class Upload:
    """A received file, independent of the transport that carried it."""
    filename: str
    body: bytes


@dataclass
class PendingFile:
    field: Field
    upload: Upload
    extension: str


def image_type(data: bytes) -> str | None:
    """The image's extension judged by its bytes, or None when it is not an image we accept."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        return "png"
    if data.startswith(b"\xff\xd8\xff") and len(data) > 4:
        return "jpg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def check_uploads(fields: list[Field], files: dict[str, Upload],
                  max_bytes: int) -> tuple[dict[str, list[str]], list[PendingFile]]:
    """Field errors and the files to write, for the image fields that received a file."""
    errors: dict[str, list[str]] = {}
    pending: list[PendingFile] = []
    for field in fields:
        upload = files.get(field.name)
        description = describe(field)
        if not description.uploadable or upload is None:
            continue
        label = description.label
        if len(upload.body) > max_bytes:
            errors[field.name] = [f"The {label} may not be greater than {max_bytes // 1024} kilobytes."]
            continue
        extension = image_type(upload.body)
        if extension is None:
            errors[field.name] = [field.message_map.get("image", "The {attribute} must be an image.")
                                  .format(attribute=label)]
            continue
        pending.append(PendingFile(field, upload, extension))
    return errors, pending


def storage_path(field: Field, record_id: str, extension: str, default_directory: str) -> str:
    if field.file_name:
        # {rev} is new on every write, so racing uploads to one record never share a path.
        name = (field.file_name.replace("{id}", record_id).replace("{ext}", extension)
                .replace("{rev}", uuid.uuid4().hex[:12]))
    else:
        name = f"{uuid.uuid4().hex}.{extension}"
    return f"{field.directory or default_directory}/{name}"


async def write_files(app: "Restify", pending: list[PendingFile], record_id: str,
                      default_directory: str) -> dict[str, str]:
    """Writes every pending file; returns field name -> public URL path (`/storage/<dir>/<file>`)."""
    written: dict[str, str] = {}
    try:
        for item in pending:
            path = storage_path(item.field, record_id, item.extension, default_directory)
            await app.disk(item.field.disk_name).put(path, item.upload.body)
            written[item.field.name] = app.file_url(path)
    except Exception:
        await discard_files(app, written.values())
        raise
    return written


async def discard_files(app: "Restify", urls: Iterable[str | None]) -> None:
    """Deletes stored files by URL from every disk (a path lives on one; the others ignore it)."""
    for url in list(urls):
        path = app.file_path(url)
        if path is not None:
            for disk in app.disks.values():
                await disk.delete(path)


# -- clean-up: what crashes and interrupted writes leave on the disks ------------------------------

TEMPORARY, UNREFERENCED = "temp", "unreferenced"


async def referenced_paths(app: "Restify") -> set[str]:
    """Every disk path a record of the application points to (any field holding a file URL)."""
    paths: set[str] = set()
    for collection in {resource.collection for resource in app.registry.resources.values()}:
        for document in await app.db.collection(collection).find(Filter()):
            for value in document.values():
                for item in value if isinstance(value, list) else [value]:
                    path = app.file_path(item)
                    if path is not None:
                        paths.add(path)
    return paths


async def leftovers(app: "Restify", older_than: float, thorough: bool = True) -> list[tuple[str, StoredFile]]:
    """(why, item) for what no record needs, on every disk: temporary leftovers of interrupted
    uploads and, if `thorough` (full scans), files no record points to and GridFS chunks of no
    file. Only items older than `older_than` seconds: a younger one may belong to an upload
    still under way (its record not yet written)."""
    cutoff = datetime.now(timezone.utc) - timedelta(seconds=older_than)
    needed = await referenced_paths(app) if thorough else set()
    found = []
    for disk in app.disks.values():
        for item in await disk.inventory(deep=thorough):
            if item.written > cutoff:
                continue
            if item.temporary:
                found.append((TEMPORARY, item))
            elif thorough and item.path not in needed:
                found.append((UNREFERENCED, item))
    return found


async def remove(app: "Restify", items: Iterable[StoredFile]) -> int:
    """Deletes listed items from their disks; returns how many."""
    items = list(items)
    for item in items:
        await app.disks[item.disk].discard(item)
    return len(items)
