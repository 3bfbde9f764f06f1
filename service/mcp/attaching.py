"""The attach, detach and sync tools (`<r>-attach-tool` ...): their descriptions and input schemas,
and their calls, which run service/core/operations/attaching.py as the REST routes do. Detach and sync take
things away, so with `mcp.confirm_destructive` they preview first (service/mcp/guard.py)."""
from collections.abc import Callable
from typing import Any

from service.config import Settings
from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.declarations.registry import Resource
from service.core.kernel.errors import BadRequest
from service.core.operations import attaching, crud as operations
from service.mcp import guard, schemas
from service.mcp.schemas import Schema

_DOES = {"attach": "Attach records to a {name} record's relation (POST {prefix}/{name}/<id>/attach/<relation>): "
                   "the ids are added, each once, to those it already has.",
         "detach": "Detach records from a {name} record's relation (POST {prefix}/{name}/<id>/detach/<relation>): "
                   "the ids are taken out; the related records themselves are not deleted.",
         "sync": "Make the ids the whole of a {name} record's relation (POST {prefix}/{name}/<id>/sync/<relation>): "
                 "ids not listed are detached (except those you cannot see), listed ones attached."}


def description(resource: Resource, operation: str, settings: Settings, shape: str) -> str:
    prefix = settings.get("server", "prefix").rstrip("/")
    relations = ", ".join(f"{name} (ids of {r.target.name})" for name, r in
                          sorted(attaching.many_relations(resource).items()))
    text = (_DOES[operation].format(name=resource.name, prefix=prefix) + f" Relations: {relations}. Every id must "
            "name a record you may see. Returns {\"data\": " + shape + "} with relationships.<relation>.")
    if guard.confirming(settings, operation):
        text += guard.two_steps('"action", "ids", "records", "relation", "attach", "detach"')
    return text


def schema(resource: Resource, operation: str, settings: Settings) -> Schema:
    return schemas.relation_change_schema(resource, sorted(attaching.many_relations(resource)), operation,
                                          guard.confirming(settings, operation))


async def call(app: Restify, tool: str, resource: str, operation: str, arguments: dict[str, Any],
               user: Model | None, context: Callable[[], Context]) -> dict[str, Any]:
    relation = arguments.get("relation")
    if not isinstance(relation, str):
        raise BadRequest("relation must be the name of a relation, a string.")
    id, ids = str(arguments.get("id") or ""), arguments.get("ids")
    versions = operations.expected_versions(arguments.get("version"))
    if guard.confirming(app.settings, operation):
        return await guard.relation_change_after_confirmation(app, tool, resource, id, operation, relation, ids,
                                                              arguments, user, context, versions)
    return await attaching.change(app, resource, id, operation, relation, {relation: ids}, context(),
                                  versions=versions)
