"""REST routes of actions and getters (service/core/operations/actions.py, getters.py): thin handlers.

    GET  <prefix>/<r>/actions              GET  <prefix>/<r>/<id>/actions
    POST <prefix>/<r>/actions?action=<key> POST <prefix>/<r>/<id>/actions?action=<key>   (If-Match)
    GET  <prefix>/<r>/getters              GET  <prefix>/<r>/<id>/getters
    GET  <prefix>/<r>/getters/run/<key>    GET  <prefix>/<r>/<id>/getters/<key>

A collection's getter runs at `<r>/getters/run/<key>`, one segment longer than `<r>/<id>/<literal>`, so no
path of a collection can be read as a record's (`<r>/getters/<key>` against `<r>/<id>/upload`). The old
`<r>/getters/<key>` still answers for existing clients; the OpenAPI document no longer lists it.
"""
from service.core.operations import actions, getters
from service.http.base import JsonHandler


class ActionsHandler(JsonHandler):
    async def get(self, name: str) -> None:
        await self.send_json(await actions.listing(self.app, name, self.context()))

    async def post(self, name: str) -> None:
        context = self.context()
        await self.send_json(await actions.run(self.app, name, context.params.get("action"), self.payload(), context))


class RecordActionsHandler(JsonHandler):
    async def get(self, name: str, id: str) -> None:
        await self.send_json(await actions.listing(self.app, name, self.context(), id))

    async def post(self, name: str, id: str) -> None:
        context = self.context()
        await self.send_json(await actions.run(self.app, name, context.params.get("action"), self.payload(), context,
                                               id, versions=self.if_match()))


class GettersHandler(JsonHandler):
    async def get(self, name: str, id: str | None = None) -> None:
        await self.send_json(await getters.listing(self.app, name, self.context(), id))


class GetterHandler(JsonHandler):
    async def get(self, name: str, key: str) -> None:
        await self.send_json(await getters.run(self.app, name, key, self.context()))


class RecordGetterHandler(JsonHandler):
    async def get(self, name: str, id: str, key: str) -> None:
        await self.send_json(await getters.run(self.app, name, key, self.context(), id))


def routes(prefix: str) -> tuple[list[tuple[str, type[JsonHandler]]], list[tuple[str, type[JsonHandler]]]]:
    """(templates that must come before the record route `<r>/{id}`, templates for after it)."""
    before = [(f"{prefix}/{{resource}}/actions", ActionsHandler),
              (f"{prefix}/{{resource}}/getters", GettersHandler),
              (f"{prefix}/{{resource}}/getters/run/{{key}}", GetterHandler),
              (f"{prefix}/{{resource}}/getters/{{key}}", GetterHandler)]  # the old path, for existing clients
    after = [(f"{prefix}/{{resource}}/{{id}}/actions", RecordActionsHandler),
             (f"{prefix}/{{resource}}/{{id}}/getters", GettersHandler),
             (f"{prefix}/{{resource}}/{{id}}/getters/{{key}}", RecordGetterHandler)]
    return before, after
