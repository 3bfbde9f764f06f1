"""`POST <prefix>/<r>/<id>/attach|detach|sync/<relation>`: the REST door of service/core/operations/attaching.py."""
from service.core.operations import attaching
from service.http.base import JsonHandler


class RelationChangeHandler(JsonHandler):
    """The body is `{"<relation>": [ids]}`; `If-Match` holds the record to the version read."""
    operation = ""  # "attach" | "detach" | "sync": one subclass per route

    async def post(self, name: str, id: str, relation: str) -> None:
        await self.send_json(await attaching.change(self.app, name, id, self.operation, relation, self.payload(),
                                                    self.context(), versions=self.if_match()))


HANDLERS = {operation: type(f"{operation.title()}Handler", (RelationChangeHandler,), {"operation": operation})
            for operation in attaching.OPERATIONS}
