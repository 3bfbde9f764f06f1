"""The operations layer: index, show, store, update, delete.

Every front door (REST, GraphQL, MCP, console) calls these with a Context; this
is the one place where authorization, validation, querying and serialization
meet. Results are the JSON bodies the REST API returns.

Each operation pins the application first (`Restify.pinned`) and passes that view along, so it
reads one registry from start to end even when the repositories are reloaded meanwhile. Writes
take the one write path (`writes`).
"""
from collections.abc import Awaitable
from functools import cache
from typing import Any
from urllib.parse import urlencode

from service.core.declarations import (DATA_MEMBER, READ, WRITE, Budget, Context, Resource, Restify, Room, ability,
                                       budget_of, encoded_size, held_budget, own_size)
from service.core.identity import pace_writes, refuse_unverified
from service.core.kernel import Forbidden, NotFound, Unauthenticated, with_values
from service.core.reading import (FILTER, Attributes, Fieldsets, IndexQuery, Page, RelationTree, Visible,
                                  apply_fieldsets, as_parameters, asked_relations, bindable, cursor_binding,
                                  cursor_key, fill, flat_object, forced, index_query, load_related, parse_fieldsets,
                                  ranked, read_cursor_page, read_through_page, record_meta, refuse_before_reading,
                                  refuse_unranked, relation_key, require_readable, resolve, resource_object,
                                  search_within, taking_turns, text_fields, trashed_asked, visibility_of, visible,
                                  with_eager, with_relations, with_relationships)
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
    repeated = context.extras.get("repeated") or {}
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
        bound = cache(lambda: cursor_binding(resource.name, query.sort, sorted(where.equals.items()),
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
        total = await collection.count(where, count_kept_for) if query.counted else None
    rows = seen.shown_rows(page.documents)
    await fill(app, resource, context, [d for d, _ in rows], fields, chosen.get(resource.name))
    spent = budget_of(app, context)
    data, sizes = await _records(app, resource, context, seen.gate, rows, fields, query.related, chosen, spent)
    body = _envelope(context, query, page, repeated, total, len(rows)) if context.shows_page_meta else {}
    frame = encoded_size(body)  # the envelope, around an empty list of records
    if spent.room is not None:
        kept = _fitting(spent.room, frame, sizes, len(rows))
        if kept < len(rows):
            data, spent.cut = data[:kept], (kept, len(rows))
    spent.charge(frame + max(len(data) - 1, 0))
    apply_fieldsets(data, {} if context.flat_records else chosen)  # flat records are built to them already
    return {**body, "data": data}


async def _records(app: Restify, resource: Resource, context: Context, gate: Any,
                   rows: list[tuple[dict[str, Any], Any]], fields: list, related: RelationTree,
                   chosen: Fieldsets, spent: Budget) -> tuple[list[dict[str, Any]], list[int]]:
    """The page's resource objects with their relations (without any, `flat_object`s: `Context.flat_records`),
    charged to `spent`, and their sizes. A page that may be cut builds what may fit, related records once."""
    keep, shown, room = chosen.get(resource.name), visible(fields), spent.room
    # A fieldset: only what it keeps is built (and sized).
    writer = Attributes([f for f in shown if f.name in keep] if keep is not None else shown, keep)
    data: list[dict[str, Any]] = []
    sizes: list[int] = []
    tree = with_eager(resource, related)
    flat = context.flat_records = context.flat_records and not tree
    for d, record in rows:
        flags = gate.flags(record, shown=True) if context.shows_flags and not flat else {}
        item = flat_object(writer, d) if flat else \
            resource_object(resource.name, writer, d, None, record_meta(flags, d))
        size = own_size(item) if room is not None else 0  # a page that is not cut is sized at once
        if room is not None:
            if sum(sizes) + size > room.bytes:
                break  # the records past what fits are not built
            spent.charge(size)
        data.append(item)
        sizes.append(size)
    if room is None:  # the records' own bytes: the page's without its brackets and commas (the caller's)
        spent.charge(encoded_size(data) - 2 - max(len(data) - 1, 0))
    if tree:
        documents = [d for d, _ in rows[:len(data)]]
        loaded = await load_related(app, resource, context, documents, tree, spent=spent, keep=chosen,
                                    copies=spent.copies and room is None)
        for position, item in enumerate(data):
            with_relationships(item, loaded.relationships[item["id"]])
            sizes[position] += loaded.bytes[item["id"]]
    return data, sizes


def _fitting(room: Room, frame: int, sizes: list[int], records: int) -> int:
    """How many of a page's records fit in `room`: all of them, or the most that fit beside the note
    that says the page was cut."""
    if len(sizes) == records and frame + sum(sizes) + max(records - 1, 0) <= room.bytes:
        return records
    kept, used = 0, frame
    for size in sizes:
        if used + size + (kept > 0) + room.note(kept + 1, records) > room.bytes:
            break
        used += size + (kept > 0)
        kept += 1
    return kept


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


def _envelope(context: Context, query: IndexQuery, page: Page, repeated: dict[str, list[str]],
              total: int | None, count: int) -> dict[str, Any]:
    """The answer of a page of `count` records, with an empty list of records (the caller fills it)."""
    by_page = page.skip is not None
    last_page = max(1, -(-total // query.per_page)) if total is not None and by_page else None
    path = context.extras.get("url", "")
    # The other parameters are encoded once (repeated ones with every value); `page` or `cursor` goes last.
    kept = urlencode([(k, value) for k, v in context.params.items() if k not in ("page", "cursor")
                      for value in repeated.get(k) or [v]] + as_parameters(context.extras.get(FILTER)))
    prefix = f"{path}?{kept}&" if kept else f"{path}?"

    def link(page_number: int) -> str:
        return f"{prefix}page={page_number}"

    def cursor_link(cursor: str | None) -> str | None:
        return f"{prefix}{urlencode({'cursor': cursor})}" if cursor is not None else None

    first: str | None
    if by_page:
        more = query.page < last_page if last_page is not None else page.more
        first, prev, next_ = link(1), link(query.page - 1) if query.page > 1 else None, \
            link(query.page + 1) if more else None
    else:
        first, prev, next_ = cursor_link(""), cursor_link(page.prev_cursor), cursor_link(page.next_cursor)
    return {
        "meta": {
            "current_page": query.page if by_page else None,
            "from": page.skip + 1 if page.skip is not None and count else None,
            "last_page": last_page,
            "path": path,
            "per_page": query.per_page,
            "to": page.skip + count if page.skip is not None and count else None,
            "total": total,
            "next_cursor": page.next_cursor,
            "prev_cursor": page.prev_cursor,
        },
        "links": {
            "first": first,
            "last": link(last_page) if last_page is not None else None,
            "prev": prev,
            "next": next_,
            "path": path,
        },
        "data": [],
    }


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
