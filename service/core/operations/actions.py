"""Actions: work a repository offers on its records beyond the five operations ("publish these posts").

    class PublishPosts(Action):             # key "publish-posts", name "Publish Posts"
        def fields(self, context):          # the payload, validated like a record's fields
            return [field("note").nullable().rules("max:100")]

        async def handle(self, context, records):
            for post in records:
                await self.update(context, post, {"published": True})   # policies, hooks, versions apply

A repository lists them in `actions(self, context)`. Running one (`run`) authorizes every record
first — the policy's `run_action(user, record, action)`, or `update` when the policy has none; a
standalone action, which runs without records, asks `run_action(user, None, action)` or `store` —
and one refusal refuses the whole request before `handle` first runs. Records are handed to
`handle` in chunks of `chunk_size`; each write it makes goes through the operations layer.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from service.core.declarations import WRITE, Context, Field, Model, Resource, Restify, ability
from service.core.describing import write_body
from service.core.identity import pace_writes
from service.core.kernel import BadRequest, ValidationFailed
from service.core.operations import crud as operations
from service.core.operations.extensions import Extension, RunContext, caller, chosen, entered, offered, running
from service.core.reading import IndexQuery, index_query, taking_turns, visibility_of
from service.core.writing import check_version, validate
from storage import Versions, canonical_id, version_of

ALL = "all"
SELECTION = "repositories"  # the payload key naming the records: a list of ids, or "all"


@dataclass
class ActionContext(RunContext):
    """The context `handle` gets: the request's, the validated `payload`, and the versions each record
    must still be at when the action writes it (If-Match on a record action)."""
    payload: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Versions] = field(default_factory=dict, repr=False)


class Action(Extension):
    standalone: ClassVar[bool] = False   # runs without records (e.g. "export", "clear my drafts")
    destructive: ClassVar[bool] = False  # removes or irreversibly changes data: agents confirm first
    chunk_size: ClassVar[int] = 200      # records per call of `handle`

    def fields(self, context: Context) -> list[Field]:
        """The payload's fields, validated with the same rules as a record's (on store)."""
        return []

    async def handle(self, context: ActionContext, records: list[Model]) -> dict[str, Any] | None:
        """Does the work on one chunk of records (none for a standalone action). A dict returned is
        the answer's `data`; None answers `{"affected": <number of records>}`."""
        return None

    def offered_on_record(self) -> bool:
        return self.on_record and not self.standalone

    async def update(self, context: ActionContext, record: Model, values: Mapping[str, Any]) -> dict[str, Any]:
        """Changes `record` as PATCH would, as the acting user: the update policy, validation, hooks
        and versions apply. Returns the record as the REST API shows it."""
        body = await operations.update(context.app, context.resource, record.id, dict(values), caller(context),
                                       partial=True, versions=context.versions.get(record.id))
        return body["data"]


def describe(action: Action, context: Context) -> dict[str, Any]:
    """What the listing shows of an action: `fields` is its payload's JSON Schema, as OpenAPI and MCP
    describe a record's fields."""
    return {"key": action.key, "name": action.name, "standalone": action.standalone,
            "destructive": action.destructive, "fields": write_body(action.fields(context), "store")}


def available(resource: Resource, context: Context, on_record: bool) -> list[Action]:
    return offered(resource, "actions", Action, context, on_record)


def find(resource: Resource, context: Context, key: Any, on_record: bool) -> Action:
    """The action `key` offered where the request is; NotFound otherwise."""
    return chosen(resource, "actions", Action, context, key, on_record)


async def listing(app: Restify, name: str, context: Context, id: str | None = None) -> dict[str, Any]:
    """`GET <r>/actions` and `GET <r>/<id>/actions` (the record must be visible)."""
    app = app.pinned()
    context.action = "actions"
    resource, _ = await entered(app, name, context, id)
    return {"data": [describe(action, context) for action in available(resource, context, id is not None)]}


@dataclass
class Prepared:
    """An action ready to run: found, its records selected and authorized, its payload validated.
    Nothing has been written; `versions` may still be narrowed (a confirmed preview) before `perform`."""
    action: Action
    context: ActionContext
    documents: list[dict[str, Any]]

    def current_versions(self) -> dict[str, int]:
        """Each selected record's version now: what a preview shows and a confirmation is bound to."""
        return {document["id"]: version_of(document) for document in self.documents}

    def at_versions(self, versions: Mapping[str, int]) -> None:
        """Writes through the helpers only if each record is still at `versions` (checked in each write)."""
        self.context.versions.update({id: frozenset((version,)) for id, version in versions.items()})


async def prepare(app: Restify, name: str, key: Any, payload: Mapping[str, Any], context: Context,
                  id: str | None = None, versions: Versions = None, paced: bool = True) -> Prepared:
    """Action `key` on record `id`, or on the records `payload["repositories"]` selects, checked as far
    as it can be without running (`versions`: what If-Match accepts for record `id`). `paced`: waits for
    the user's pace first; a caller that may only preview (MCP) says False and paces what it runs (`paced_run`)."""
    app = app.pinned()
    context.action = "action"
    # The token needs `<r>:<key>` (or `<r>:write`, which covers every action; also what no key asks).
    kind = key if isinstance(key, str) and key else WRITE
    resource = await operations.enter_to_write(app, name, context, kind) if paced \
        else operations.enter(app, name, context, kind)
    action = find(resource, context, key, on_record=id is not None)  # unknown: 404 before any read
    if id is not None:
        documents = [await operations.find(app, resource, id, context)]
    elif action.standalone:
        documents = []
    else:
        documents = await _selected(app, resource, payload.get(SELECTION), context)
    targets = [None] if action.standalone else [resource.model(document) for document in documents]
    if not all(_may_run(app, resource, context, action, record) for record in targets):
        raise operations.deny(context)
    for document in documents:
        check_version(document, versions)  # only a record action has any
    await app.ready()
    sent = {k: v for k, v in payload.items() if k != SELECTION}
    values = await validate(app, action.fields(context), sent, "store", acting=context.user)
    # What `handle` writes through the helpers on its own repository is the action's work: a token allowed
    # to run it needs no `<r>:write` for that.
    acting = running(context, app, resource, ActionContext, lent=frozenset((ability(resource.name, WRITE),)),
                     payload=values,
                     versions={id: versions} if id is not None and versions is not None else {})
    return Prepared(action, acting, documents)


async def perform(prepared: Prepared) -> dict[str, Any]:
    """Hands the records to `handle`, `chunk_size` at a time (a standalone action: once, none)."""
    action, context = prepared.action, prepared.context
    model = context.app.resource(context.resource).model
    records = [model(document) for document in prepared.documents]
    if action.standalone:
        answer = await action.handle(context, [])
    else:
        answer, size = None, max(1, int(action.chunk_size))
        for start in range(0, len(records), size):
            returned = await action.handle(context, records[start:start + size])
            answer = returned if returned is not None else answer  # the last chunk that answered
    return {"data": answer if answer is not None else {"affected": len(records)}}


async def paced_run(prepared: Prepared) -> dict[str, Any]:
    """`perform` for an action prepared without its pace: the pace first, as one write."""
    await pace_writes(prepared.context.app, prepared.context)
    return await perform(prepared)


async def run(app: Restify, name: str, key: Any, payload: Mapping[str, Any], context: Context,
              id: str | None = None, versions: Versions = None) -> dict[str, Any]:
    """Prepares and performs action `key`: `{"data": <what handle returned>}` or `{"data": {"affected": n}}`."""
    return await perform(await prepare(app, name, key, payload, context, id, versions))


def _may_run(app: Restify, resource: Resource, context: Context, action: Action, record: Model | None) -> bool:
    """`run_action(user, record, action)` when the policy has it; else `update` (a record) or `store`
    (a standalone action). A policy that raises refuses."""
    gate = app.registry.policies.gate(resource.model, context.user)
    return gate.allows_or("run_action", "update" if record is not None else "store", record, action)


def _refuse(key: str, message: str) -> ValidationFailed:
    return ValidationFailed({key: [message]})


async def _selected(app: Restify, resource: Resource, selection: Any, context: Context) -> list[dict[str, Any]]:
    """The records an index action runs on, each one the user may see: every record of `ids`, or
    for "all" every record the user's scope and the request's index filters select."""
    limit = app.settings.cap("actions", "max_records")
    seen = visibility_of(app, resource, context.user)
    if selection == ALL:
        fields = resource.fields(context)
        query = _index_query(app, resource, fields, context)
        async with taking_turns(app, resource, fields, query, context):  # a search, a long in list
            where = await operations.index_filter(app, resource, fields, query, context, seen)
            documents = await app.collection(resource).find(where, sort=[("id", 1)], limit=limit + 1 if limit else 0)
        if limit is not None and len(documents) > limit:
            raise BadRequest(f"The action would run on more than {limit} records; narrow the filters.",
                             {SELECTION: [f"More than {limit} records are selected."]})
        return seen.shown(documents)
    if selection is None or selection == [] or selection == "":
        raise _refuse(SELECTION, f"The {SELECTION} field is required.")
    if not isinstance(selection, list) or not all(isinstance(item, str) for item in selection):
        raise _refuse(SELECTION, f'The {SELECTION} must be a list of ids or "{ALL}".')
    if limit is not None and len(selection) > limit:
        raise _refuse(SELECTION, f"The {SELECTION} may not have more than {limit} items.")
    ids = list(dict.fromkeys(canonical_id(item) for item in selection))
    found = await seen.find_many(ids)
    # An id the user cannot see is refused like one that does not exist, by its place in the list.
    missing = {f"{SELECTION}.{n}": ["The selected record is invalid."] for n, item in enumerate(selection)
               if canonical_id(item) not in found}
    if missing:
        raise ValidationFailed(missing)
    return [found[i] for i in ids]


def _index_query(app: Restify, resource: Resource, fields: list, context: Context) -> IndexQuery:
    """What the index would select with the request's parameters (pages and sorting aside)."""
    params = {k: v for k, v in context.params.items() if k != "action"}
    return index_query(resource, fields, context, app.settings, params)
