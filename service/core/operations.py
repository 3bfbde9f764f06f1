"""The operations layer: index, show, store, update, delete.

Every front door (REST, GraphQL, MCP, console) calls these with a Context; this
is the one place where authorization, validation, querying and serialization
meet. Results are the JSON bodies the REST API returns.
"""
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

from service.core import loading, tokens, uploads
from service.core.app import Restify
from service.core.context import Context
from service.core.errors import Forbidden, NotFound, Unauthenticated, ValidationFailed
from service.core.query import IndexQuery, check_parameter_names, parse_index, parse_related, relatable_per_page
from service.core.registry import Resource
from service.core.serializer import iso, resource_object, visible
from service.core.validation import canonical_references, unique_message, validate_request
from storage import DuplicateKey, Filter, new_id


MAX_SKIP = 2**63 - 1


def _deny(context: Context) -> Exception:
    # A guest who is refused may succeed after logging in; a user who is refused will not.
    return Unauthenticated() if context.user is None else Forbidden()


def _enter(app: Restify, name: str, context: Context) -> Resource:
    if app.settings.requires_user and context.user is None:
        raise Unauthenticated()
    resource = app.resource(name)
    if not app.registry.policies.for_model(resource.model).allow_restify(context.user):
        raise _deny(context)
    return resource


def _authorize(app: Restify, resource: Resource, action: str, context: Context,
               document: dict[str, Any] | None = None) -> None:
    record = resource.model(document) if document is not None else None
    if not app.registry.policies.allows(resource.model, action, context.user, record):
        raise _deny(context)


def serialize(app: Restify, resource: Resource, context: Context, document: dict[str, Any],
              relationships: dict[str, list[dict]] | None = None, fields: list | None = None) -> dict[str, Any]:
    """One resource object with its authorization flags, as show/store/update return it;
    pass the `fields` the request already built to spare building them again."""
    meta = app.registry.policies.flags(resource.model, context.user, resource.model(document))
    shown = visible(fields if fields is not None else resource.fields(context))
    return resource_object(resource.name, shown, document, relationships or None, meta)


async def _find(app: Restify, resource: Resource, id: str, context: Context) -> dict[str, Any]:
    """The record, if `context.user` may see it: outside the scope, or refused by `show`, it is
    as missing as an id that never existed, so ids cannot be probed."""
    policies = app.registry.policies
    where = policies.restrict(resource.model, context.user, Filter(equals={"id": id}))
    document = await app.collection(resource).find_one(where)
    if document is None or not policies.gate(resource.model, context.user).shows(resource.model(document)):
        raise NotFound()
    return document


async def index(app: Restify, name: str, context: Context) -> dict[str, Any]:
    context.action = "index"
    resource = _enter(app, name, context)
    await app.ready()
    fields = resource.fields(context)
    query = parse_index(resource, fields, context.params, app.settings)
    # The policy's scope is inside the query: pages and the total count only readable records.
    where = app.registry.policies.restrict(resource.model, context.user, Filter(
        equals=canonical_references(app, fields, query.equals),
        search_fields=tuple(f.name for f in fields if f.is_searchable),
        search_text=query.search,
    ))
    collection = app.collection(resource)
    skip = (query.page - 1) * query.per_page
    # A page past 64 bits of skip is past any real collection: empty, without asking the server.
    fits = skip + query.per_page <= MAX_SKIP
    documents = await collection.find(where, sort=query.sort, skip=skip, limit=query.per_page) if fits else []
    total = await collection.count(where)
    gate = app.registry.policies.gate(resource.model, context.user)
    rows = [(d, record) for d, record in ((d, resource.model(d)) for d in documents) if gate.shows(record)]
    documents = [d for d, _ in rows]
    tree = loading.with_eager(resource, query.related)
    related = await loading.load(app, resource, context, documents, tree) if tree else {}
    shown = visible(fields)
    data = [
        resource_object(resource.name, shown, d, related.get(d["id"]) if tree else None,
                        gate.flags(record, shown=True))
        for d, record in rows
    ]
    return _envelope(context, query, skip, len(data), total, data)


def _envelope(context: Context, query: IndexQuery, skip: int, count: int, total: int,
              data: list[dict[str, Any]]) -> dict[str, Any]:
    last_page = max(1, -(-total // query.per_page))
    path = context.extras.get("url", "")
    # The other parameters are encoded once; `page` goes last, as it would through urlencode.
    kept = urlencode({k: v for k, v in context.params.items() if k != "page"})
    prefix = f"{path}?{kept}&page=" if kept else f"{path}?page="

    def link(page: int) -> str:
        return f"{prefix}{page}"

    return {
        "meta": {
            "current_page": query.page,
            "from": skip + 1 if count else None,
            "last_page": last_page,
            "path": path,
            "per_page": query.per_page,
            "to": skip + count if count else None,
            "total": total,
        },
        "links": {
            "first": link(1),
            "last": link(last_page),
            "prev": link(query.page - 1) if query.page > 1 else None,
            "next": link(query.page + 1) if query.page < last_page else None,
            "path": path,
        },
        "data": data,
    }


async def show(app: Restify, name: str, id: str, context: Context) -> dict[str, Any]:
    context.action = "show"
    resource = _enter(app, name, context)
    check_parameter_names(context.params)
    tree = parse_related(resource, context.params, int(app.settings.get("query", "max_related_depth") or 3))
    cap = relatable_per_page(context.params, app.settings)
    document = await _find(app, resource, id, context)
    tree = loading.with_eager(resource, tree)
    related = await loading.load(app, resource, context, [document], tree, cap=cap) if tree else {}
    return {"data": serialize(app, resource, context, document, related.get(document["id"]))}


def now() -> str:
    """The timestamp stored in created_at/updated_at: ISO 8601, UTC, milliseconds.

    A fixed-width string sorts chronologically and survives `$set` unchanged on every
    server (the embedded one turns a `$set` datetime into a naive string)."""
    return iso(datetime.now(timezone.utc))


async def save(app: Restify, resource: Resource, fields: list, values: dict[str, Any],
               pending: list[uploads.PendingFile], record_id: str,
               existing: dict[str, Any] | None) -> dict[str, Any]:
    """Writes the uploads, then the record; a failed record write takes the new files back,
    a successful one deletes the files it replaced."""
    written = await uploads.write(app, pending, record_id, resource.name)
    values.update(written)
    collection = app.collection(resource)
    replaced: dict[str, Any] = {}
    try:
        if existing is None:
            document = await collection.insert({**values, "id": record_id})
        else:
            swapped = await collection.swap(record_id, values)
            replaced, document = swapped if swapped else ({}, None)
    except DuplicateKey as error:
        await uploads.discard(app, written.values())
        raise ValidationFailed(unique_message(fields, error.field)) from None
    except BaseException:
        await uploads.discard(app, written.values())
        raise
    if document is None:
        await uploads.discard(app, written.values())
        raise NotFound()
    # What this write replaced (not what was read before it): racing uploads leave no orphan.
    await uploads.discard(app, [replaced.get(n) for n, url in written.items() if replaced.get(n) != url])
    return document


async def store(app: Restify, name: str, payload: dict[str, Any], context: Context,
                files: dict[str, uploads.Upload] | None = None) -> dict[str, Any]:
    context.action = "store"
    resource = _enter(app, name, context)
    _authorize(app, resource, "store", context)
    await app.ready()
    fields = resource.fields(context)
    values, pending = await validate_request(app, fields, payload, "store", files=files, acting=context.user)
    for field in fields:
        if field.value_callback is not None:
            values[field.name] = field.value_callback(context)
    values["created_at"] = values["updated_at"] = now()
    document = await save(app, resource, fields, values, pending, new_id(), None)
    return {"data": serialize(app, resource, context, document, fields=fields)}


async def update(app: Restify, name: str, id: str, payload: dict[str, Any], context: Context,
                 partial: bool = False, files: dict[str, uploads.Upload] | None = None) -> dict[str, Any]:
    context.action = "patch" if partial else "update"
    resource = _enter(app, name, context)
    document = await _find(app, resource, id, context)
    _authorize(app, resource, "update", context, document)
    await app.ready()
    fields = resource.fields(context)
    values, pending = await validate_request(app, fields, payload, context.action, record_id=id, files=files,
                                             existing=document, acting=context.user)
    values["updated_at"] = now()
    updated = await save(app, resource, fields, values, pending, id, document)
    await tokens.after_user_update(app, resource, fields, values, id, context)
    return {"data": serialize(app, resource, context, updated, fields=fields)}


async def delete(app: Restify, name: str, id: str, context: Context) -> None:
    context.action = "delete"
    resource = _enter(app, name, context)
    document = await _find(app, resource, id, context)
    _authorize(app, resource, "delete", context, document)
    removed = await app.collection(resource).remove(id)
    if removed is None:
        raise NotFound()
    await tokens.after_user_delete(app, resource, id)
    # The files of the record as deleted, not as read above: an upload may have replaced one meanwhile.
    await uploads.discard(app, [removed.get(f.name) for f in resource.fields(context) if f.is_file])
