"""`GET <prefix>/openapi.json`: the OpenAPI document of the registry the app serves now."""
import re

from service.core.declarations.app import Restify
from service.http.base import JsonHandler
from service.openapi.document import document_json


class OpenApiHandler(JsonHandler):
    async def get(self) -> None:
        # Read per request (cached per registry object), so a live reload is followed.
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        await self.send_bytes(document_json(self.app.registry, self.app.settings))


def openapi_routes(app: Restify) -> list[tuple]:
    """The document's route, named by its path; it goes before the REST routes, whose
    `{prefix}/{resource}` would take `openapi.json` for a repository name."""
    path = f"{app.settings.get('server', 'prefix').rstrip('/')}/openapi.json"
    return [(re.escape(path), OpenApiHandler, {"app": app}, path)]
