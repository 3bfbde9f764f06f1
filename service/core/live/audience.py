"""Who may see a changed record, and as what: the read rules of `show`, applied to a document a
change stream delivered instead of one a request read.

The rules are the operations layer's own: what the user may see (`visibility`: `allow_restify`, the
policy's `scope`, `show`), the fields visible in this context, eager relations, and the same
presentation (`presenting`).
"""
from collections.abc import Mapping
from typing import Any

from service.core.declarations import Budget, Context, Resource, Restify
from service.core.reading import visibility_of, with_relations


def matches(values: Mapping[str, Any], document: Mapping[str, Any]) -> bool:
    """Exact-match filters (a scope dict, an index's `<field>=v`) tested on a document in the process:
    a missing field equals None, and a boolean stored as 1/0 equals True/False, as in the query."""
    return all(document.get(name) == value for name, value in values.items())


async def present(app: Restify, resource: Resource, context: Context,
                  document: dict[str, Any]) -> dict[str, Any] | None:
    """`{"data": resource}` exactly as show gives it to this context's user, or None when that
    user may not see the record."""
    app = app.pinned()
    if not visibility_of(app, resource, context.user).admits(document):
        return None
    # Not bounded by the answer's budget: a change comes with the model's eager relations only, which
    # the application declares and no subscriber can ask for more of.
    return {"data": await with_relations(app, resource, context, document, spent=Budget(None))}


def gone(resource: Resource, id: str) -> dict[str, Any]:
    """What a deleted event carries: the id and type, nothing else."""
    return {"data": {"id": id, "type": resource.name}}
