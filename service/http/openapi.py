"""`GET <prefix>/openapi.json`: the OpenAPI document of the registry the app serves now."""
from service.http.base import JsonHandler
from service.openapi import document_json


class OpenApiHandler(JsonHandler):
    async def get(self) -> None:
        # Read per request (cached per registry object), so a live reload is followed.
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(document_json(self.app.registry, self.app.settings))
