"""Serves stored files (`/storage/<dir>/<file>`) from the local disk or GridFS."""
from service.core.kernel.errors import NotFound
from service.core.writing.uploads import CONTENT_TYPES, image_type
from service.http.base import JsonHandler


class FileHandler(JsonHandler):
    async def get(self, path: str) -> None:
        data = await self.app.read_file(path)
        if data is None:
            raise NotFound()
        kind = image_type(data)
        # Judged by content, never by name; anything else is a download, not a page.
        self.set_header("Content-Type", CONTENT_TYPES[kind] if kind else "application/octet-stream")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", "public, max-age=3600")
        self.set_header("Content-Security-Policy", "default-src 'none'")
        await self.send_bytes(data)  # with the body's ETag, and 304 to a matching If-None-Match
