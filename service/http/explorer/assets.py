"""The explorer's static files: a fixed allow-list, read from the package once and served from memory.

A file's path carries a hash of its content (`/docs/assets/<hash>/<name>`), so it can be cached for a
year and a new release is fetched anew. Nothing of a request reaches the file system: a name that is not
on the list, or a hash that is not the file's, is a 404."""
import hashlib
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

from service.core.kernel.errors import NotFound
from service.http.base import JsonHandler

PREFIX = "/docs/assets"
HASH_LENGTH = 16
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
# Every file the pages load; the licences in static/licenses ship with the package but are not served.
NAMES = (
    "explorer.css",
    "swagger-ui-bundle.js", "swagger-ui.css", "swagger-init.js",
    "react.production.min.js", "react-dom.production.min.js", "graphiql.min.js", "graphiql.min.css",
    "graphiql-init.js",
)
YEAR = 365 * 24 * 3600


@dataclass(frozen=True)
class Asset:
    name: str

    @cached_property
    def body(self) -> bytes:
        return resources.files(__package__).joinpath("static", self.name).read_bytes()

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()[:HASH_LENGTH]

    @property
    def content_type(self) -> str:
        return _TYPES[self.name[self.name.rindex("."):]]

    @property
    def url(self) -> str:
        return f"{PREFIX}/{self.digest}/{self.name}"


ASSETS: dict[str, Asset] = {name: Asset(name) for name in NAMES}


def asset_url(name: str) -> str:
    """The path a page loads `name` from (one of NAMES)."""
    return ASSETS[name].url


class AssetHandler(JsonHandler):
    door = "explorer"

    async def admit(self) -> None:
        """No bearer token is read: the files are the same for everyone."""

    async def get(self, digest: str, name: str) -> None:
        asset = ASSETS.get(name)
        if asset is None or digest != asset.digest:
            raise NotFound()
        self.set_header("Content-Type", asset.content_type)
        self.set_header("Cache-Control", f"public, max-age={YEAR}, immutable")
        self.set_header("X-Content-Type-Options", "nosniff")
        await self.send_bytes(asset.body)
