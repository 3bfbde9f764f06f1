"""REST handlers of the bulk writes: a JSON array in, every record or none written."""
from typing import Any

from service.core.operations import bulk
from service.http.base import JsonHandler
from service.http.json_bodies import decode_json


class BulkHandler(JsonHandler):
    def items(self) -> Any:
        """The body: a JSON array (core refuses anything else with a JSON message)."""
        body = self.body_bytes
        return decode_json(body) if body.strip() else None


class BulkStoreHandler(BulkHandler):
    """`POST <prefix>/<r>/bulk`: an array of records to create -> 201 `{"data": [...]}`."""

    async def post(self, name: str) -> None:
        await self.send_json(await bulk.store_bulk(self.app, name, self.items(), self.context()), 201)


class BulkUpdateHandler(BulkHandler):
    """`POST <prefix>/<r>/bulk/update`: an array of `{"id", "version"?, ...fields}` (PATCH each)."""

    async def post(self, name: str) -> None:
        await self.send_json(await bulk.update_bulk(self.app, name, self.items(), self.context()))


class BulkDeleteHandler(BulkHandler):
    """`DELETE <prefix>/<r>/bulk/delete`, and POST for clients that send no body with DELETE:
    an array of ids -> 204."""

    async def delete(self, name: str) -> None:
        await bulk.delete_bulk(self.app, name, self.items(), self.context())
        self.no_content()

    post = delete
