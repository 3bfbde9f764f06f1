"""Getters: read-only answers a repository computes ("stats for this post", "totals").

    class PostStats(Getter):                    # key "post-stats", name "Post Stats"
        async def handle(self, context, record=None):
            return {"comments": ...}

A repository lists them in `getters(self, context)`. Read policies apply: the repository's
`allow_restify`, and on a record its scope and `show` (a record the user may not see is a 404,
as on show). Whatever `handle` returns is the answer's `data`.
"""
from typing import Any

from service.core.declarations import READ, Context, Model, Restify
from service.core.operations import crud as operations
from service.core.operations.extensions import Extension, RunContext, chosen, entered, offered, running


class Getter(Extension):
    async def handle(self, context: RunContext, record: Model | None = None) -> Any:
        """The answer's `data` (any JSON value); `record` is None on the collection."""
        return None


def describe(getter: Getter) -> dict[str, Any]:
    return {"key": getter.key, "name": getter.name}


async def listing(app: Restify, name: str, context: Context, id: str | None = None) -> dict[str, Any]:
    """`GET <r>/getters` and `GET <r>/<id>/getters`."""
    app = app.pinned()
    context.action = "getters"
    resource, _ = await entered(app, name, context, id)
    return {"data": [describe(g) for g in offered(resource, "getters", Getter, context, id is not None)]}


async def run(app: Restify, name: str, key: Any, context: Context, id: str | None = None) -> dict[str, Any]:
    """`GET <r>/getters/run/<key>` and `GET <r>/<id>/getters/<key>`."""
    app = app.pinned()
    context.action = "getter"
    resource = operations.enter(app, name, context, READ)
    getter = chosen(resource, "getters", Getter, context, key, id is not None)  # unknown: 404 before any read
    _, document = await entered(app, name, context, id)
    record = resource.model(document) if document is not None else None
    return {"data": await getter.handle(running(context, app, resource), record)}
