"""The operations layer: index, show, store, update, delete.

Every front door (REST, GraphQL, MCP, console) calls these with a Context; this
is the one place where authorization, validation, querying and serialization
meet. Results are the JSON bodies the REST API returns.

Each operation pins the application first (`Restify.pinned`) and passes that view along, so it
reads one registry from start to end even when the repositories are reloaded meanwhile. Writes
take the one write path (`writes`).
"""
from collections.abc import Awaitable
from typing import Any

from service.core.declarations import DATA_MEMBER, READ, WRITE, Context, Resource, Restify, ability, budget_of, \
    held_budget
from service.core.identity import pace_writes, refuse_unverified
from service.core.kernel import Forbidden, NotFound, Unauthenticated, with_values
from service.core.reading import (IndexQuery, Page, Visible, apply_fieldsets, asked_relations, bindable,
                                  once, charged_page, cursor_binding, cursor_key, estimate_seconds, fill, forced,
                                  index_query, page_envelope, page_records, parse_fieldsets, ranked, read_cursor_page,
                                  read_through_page, refuse_before_reading, refuse_unranked, relation_key,
                                  require_readable, resolve, search_within, taking_turns, text_fields, trashed_asked,
                                  visibility_of, with_eager, with_relations)
from service.core.writing import Upload, Write, canonical_references, remove, trash, write
from service.core.writing import expected_versions, now  # noqa: F401 (the doors import them from here too)
from storage import Filter, Versions


def deny(context: Context) -> Exception:
    """What a policy's refusal answers: a guest who is refused may succeed after logging in
    (401); a user who is refused will not (403)."""
    return Unauthenticated() if context.user is None else Forbidden()


def enter(app: Restify, name: str, context: Context, kind: str) -> Resource:
    """The repository `name`, if the request may enter it: a user where routes require one, the token's
    ability `<name>:<kind>` (`read`, `write` or an action's key), then the policy's `allow_restify`."""
    if app.settings.requires_user and context.user is None:
        raise Unauthenticated()
    resource = app.registry.get(name)
    if resource is None:
        # The valid names only for a user, and only those their policies let in: a guest learns none.
        known = app.registry.entered_by(context.user) if context.user is not None else []
        raise NotFound(f"No repository {name!r}" + (f"; the repositories are: {', '.join(known)}." if known else "."))
    context.require(ability(resource.name, kind))
    if not app.registry.policies.for_model(resource.model).allow_restify(context.user):
        raise deny(context)
    refuse_unverified(app, context)  # a write, by a user whose address is not confirmed yet
    return resource


async def enter_to_write(app: Restify, name: str, context: Context, kind: str = WRITE) -> Resource:
    """`enter` for a write of one record, which first waits for the user's pace (`pace_writes`)."""
    resource = enter(app, name, context, kind)
    await pace_writes(app, context)
    return resource


# Policy methods a policy may leave out, and the one that answers for them then.
FALLBACKS = {"view_trashed": "delete", "restore": "delete", "force_delete": "delete"}


def authorize(app: Restify, resource: Resource, action: str, context: Context,
              document: dict[str, Any] | None = None) -> None:
    record = resource.model(document) if document is not None else None
    gate = app.registry.policies.gate(resource.model, context.user)
    allowed = gate.allows_or(action, FALLBACKS[action], record) if action in FALLBACKS else gate.allows(action, record)
    if not allowed:
        raise deny(context)


async def find(app: Restify, resource: Resource, id: str, context: Context,
               trashed: str = "without") -> dict[str, Any]:
    """The record, if `context.user` may see it (`visibility`): outside the scope, or refused by
    `show`, it is as missing as an id that never existed, so ids cannot be probed. A trashed one
    only when `trashed` lets it in."""
    document = await visibility_of(app, resource, context.user, trashed).find(id)
    if document is None:
        raise NotFound()
    return document


async def index(app: Restify, name: str, context: Context) -> dict[str, Any]:
    app = app.pinned()
    context.action = "index"
    resource = enter(app, name, context, READ)
    fields = resource.fields(context)
    query = index_query(resource, fields, context, app.settings)  # a malformed query reads nothing
    require_readable(resource, query.related, context)
    chosen = parse_fieldsets(app, resource, context)
    seen = visibility_of(app, resource, context.user, trashed_asked(context.params))
    await app.ready()
    collection = app.collection(resource)
    async with taking_turns(app, resource, fields, query, context) as count_kept_for:  # expensive ones take turns
        where = await index_filter(app, resource, fields, query, context, seen)
        await refuse_unranked(query, collection, where)
        # A cursor is bound to what chooses and orders the records, and to the page size (worked out
        # once, when a cursor is read or sealed: an answer without its page's meta seals none).
        bound = once(lambda: cursor_binding(resource.name, query.sort, sorted(where.equals.items()),
                                             bindable(where.conditions), query.search, query.per_page))
        if relation_key(query.sort):
            page = await read_through_page(app, resource, context, where, query.sort, query.per_page, query.page,
                                           query.cursor)
        else:
            def read_page(only: tuple[str, ...] = ()) -> Awaitable[Page]:
                return read_cursor_page(collection, where, query.sort, query.per_page, query.page, query.cursor,
                                        cursor_key(app.settings), bound, only)
            await refuse_before_reading(app, resource, context, with_eager(resource, query.related), read_page)
            page = await read_page()
        total = await collection.count(where, count_kept_for, estimate_for=estimate_seconds(app)) \
            if query.counted else None
    rows = seen.shown_rows(page.documents)
    await fill(app, resource, context, [d for d, _ in rows], fields, chosen.get(resource.name))
    spent, tree = budget_of(app, context), with_eager(resource, query.related)
    data, sizes = await page_records(app, resource, context, seen.gate, rows, fields, tree, chosen, spent)
    body = page_envelope(context.params, context.extras, query, page, total, len(rows)) \
        if context.shows_page_meta else {}
    data = charged_page(spent, body, data, sizes, len(rows), tree)
    apply_fieldsets(data, {} if context.flat_records else chosen)  # flat records are built to them already
    return {**body, "data": data}


async def index_filter(app: Restify, resource: Resource, fields: list, query: IndexQuery, context: Context,
                       seen: Visible | None = None) -> Filter:
    """The records an index query selects (its matches, filters and search), within the user's scope
    (`seen`, else the user's view of `resource`); index actions that run on "all" select with it too."""
    equals = canonical_references(app, fields, query.equals)
    conditions = with_values(query.conditions,
                             lambda field, value: canonical_references(app, fields, {field: value})[field])
    conditions = await resolve(app, resource, context, conditions)  # filters through relations: their ids
    # The policy's scope is inside the query: pages and the total count only readable records.
    seen = seen if seen is not None else visibility_of(app, resource, context.user)
    # A ranked search leaves related records out: MongoDB scores only the records its text index matches.
    related = () if ranked(query) else await search_within(app, resource, context, query.search)
    return seen.within(Filter(
        equals=equals,
        search_fields=tuple(f.name for f in fields if f.is_searchable),
        search_text=query.search,
        search_within=related,
        conditions=conditions,
        text_fields=text_fields(resource) if query.search else (),
    ))


async def show(app: Restify, name: str, id: str, context: Context) -> dict[str, Any]:
    app = app.pinned()
    context.action = "show"
    resource = enter(app, name, context, READ)
    asked = asked_relations(app, resource, context)
    chosen = parse_fieldsets(app, resource, context)
    document = await find(app, resource, id, context, trashed_asked(context.params))
    with held_budget(app, context) as spent:
        data = await with_relations(app, resource, context, document, asked, chosen)
        spent.charge(DATA_MEMBER)
    apply_fieldsets(data, chosen)
    return {"data": data}


async def store(app: Restify, name: str, payload: dict[str, Any], context: Context,
                files: dict[str, Upload] | None = None) -> dict[str, Any]:
    app = app.pinned()
    context.action = "store"
    resource = await enter_to_write(app, name, context)
    authorize(app, resource, "store", context)
    await app.ready()
    written = await write(Write(app, resource, resource.fields(context), context, payload, files=files))
    return {"data": written.data}


async def update(app: Restify, name: str, id: str, payload: dict[str, Any], context: Context,
                 partial: bool = False, files: dict[str, Upload] | None = None,
                 versions: Versions = None) -> dict[str, Any]:
    """`versions`: the record's versions the client accepts (If-Match, `version`); None: any."""
    app = app.pinned()
    context.action = "patch" if partial else "update"
    resource = await enter_to_write(app, name, context)
    document = await find(app, resource, id, context)
    authorize(app, resource, "update", context, document)
    await app.ready()
    written = await write(Write(app, resource, resource.fields(context), context, payload, action=context.action,
                                existing=document, files=files, versions=versions))
    return {"data": written.data}


async def delete(app: Restify, name: str, id: str, context: Context, versions: Versions = None) -> None:
    """A repository with soft deletes trashes the record, unless `?force=true` (policy `force_delete`,
    else `delete`) deletes it for good, trashed or not."""
    app = app.pinned()
    context.action = "delete"
    resource = await enter_to_write(app, name, context)
    force = resource.soft_deletes and forced(context.params)
    document = await find(app, resource, id, context, "with" if force else "without")
    authorize(app, resource, "force_delete" if force else "delete", context, document)
    if resource.soft_deletes and not force:
        await trash(app, resource, context, document, versions)
    else:
        await remove(app, resource, context, document, versions)
