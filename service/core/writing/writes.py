"""The one write path. Every write of a record (store, update, register, the profile update, bulk
writes, attach, detach and sync, and the seeders' writes through them) takes the same steps in the
same order:

    validate -> server-set values -> timestamps -> before-hooks -> save (files first, then the
    record) -> after-hooks -> serialize

and a delete the steps that apply to it: before-hooks -> remove -> after-hooks -> files. The
repository's hooks (`before_store`, `stored`, `before_update`, `updated`, `before_delete`,
`deleted`) run at the places marked "hooks", after-hooks after the framework's own after-effects
(a new password ends the user's other sessions; a new address is to be confirmed).

A write of an existing record may name the `versions` it accepts (If-Match, a `version`
argument): the record must be at one of them when it is read and, checked again inside the
atomic save, when it is written; otherwise PreconditionFailed (412).

A relation change (attach, detach, sync: `service.core.operations.attaching`) brings values it decided itself,
which are not validated, and attach and detach change the relation's array in place (`SetChange`);
every other step is the same.
"""
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from service.core.declarations import Context, Field, Resource, Restify, iso, refused_field
from service.core.identity import after_address_change, after_user_delete, after_user_update, unverified_on_change
from service.core.kernel import BadRequest, Forbidden, NotFound, PreconditionFailed, ValidationFailed
from service.core.reading import fill, resource_object, serialize
from service.core.writing import uploads
from service.core.writing.validation import unique_message, validate_request
from storage import VERSION, DuplicateKey, Versions, new_id, version_of


def now() -> str:
    """The timestamp stored in created_at/updated_at: ISO 8601, UTC, milliseconds.

    A fixed-width string sorts chronologically and survives `$set` unchanged on every
    server (the embedded one turns a `$set` datetime into a naive string)."""
    return iso(datetime.now(timezone.utc))


@dataclass(frozen=True)
class SetChange:
    """An array changed in place by the database, in the record's atomic save: "add" puts `ids` in
    (each once), "pull" takes them out (a BelongsToMany relation's attach and detach)."""
    key: str
    operation: str
    ids: list[str]


@dataclass
class Write:
    """One record to write, and everything its steps read. `app` is the operation's pinned view:
    every step sees the registry the operation started with."""
    app: Restify
    resource: Resource                  # where the record is saved
    fields: list[Field]                 # what validates the payload and what the answer shows
    context: Context
    payload: Mapping[str, Any]
    action: str = "store"               # "store", "update" (every field) or "patch" (the fields sent)
    existing: dict[str, Any] | None = None  # the record an update changes
    files: Mapping[str, uploads.Upload] | None = None
    flags: bool = True                  # the answer carries the policy's authorization flags
    acts_as_written: bool = False       # the record written is the acting user from now on
    versions: Versions = None           # the versions of `existing` this update accepts (None: any)
    decided: Mapping[str, Any] | None = None  # values decided by the caller (a relation change): not validated
    change: SetChange | None = None     # an array changed in place, beside the values set
    answer: bool = True                 # build the answer (False: the caller builds its own)
    proven: bool = False                # the user proved who they are (a reset token): no current_password

    @property
    def creating(self) -> bool:
        return self.existing is None


@dataclass
class Written:
    document: dict[str, Any]            # as stored
    data: dict[str, Any]                # the resource object the client is answered with


@dataclass
class Prepared:
    """A write whose values are validated and stamped: what its later steps need."""
    plan: Write
    values: dict[str, Any]
    pending: list[uploads.PendingFile]
    record_id: str                      # chosen now for a new record (file names need it early)


@dataclass
class Saved:
    document: dict[str, Any]            # as this write left it
    replaced: dict[str, Any] | None     # an update's record just before this write (None: created)


async def write(plan: Write) -> Written:
    """Runs the steps of the write path, in order, for one record. Bulk writes run the same steps
    (`prepare`, `before`, `persist`, `finish`) for many records, each step for all before the next."""
    prepared = await prepare(plan)
    await before(prepared)
    saved = await persist(prepared)
    return await finish(prepared, saved.document)


async def prepare(plan: Write) -> Prepared:
    """Steps 1-3: the version read, then validate (fields and uploads together, one 422 with every
    problem), server-set values and timestamps. Nothing is written."""
    app, context = plan.app, plan.context
    record_id = None if plan.existing is None else plan.existing["id"]
    if plan.existing is not None:
        check_version(plan.existing, plan.versions)
    pending: list[uploads.PendingFile]
    if plan.decided is not None:
        values, pending = dict(plan.decided), []
    else:
        check_fields_allowed(plan)
        values, pending = await validate_request(app, plan.fields, plan.payload, plan.action, record_id=record_id,
                                                 files=plan.files, existing=plan.existing, acting=context.user,
                                                 proven=plan.proven)
    if plan.creating:
        values.update(server_values(plan.fields, context))
        values.update(empty_relations(plan.resource, values))
    else:
        values.update(unverified_on_change(app, plan.resource, plan.existing, values))
    stamp = now()
    if plan.creating:
        values["created_at"] = stamp
    values["updated_at"] = stamp
    return Prepared(plan, values, pending, record_id or new_id())


def check_fields_allowed(plan: Write) -> None:
    """403 naming the first field the body sends that `can_store` / `can_update` refuse to the user."""
    record = None if plan.existing is None else plan.resource.model(plan.existing)
    refused = refused_field(plan.fields, [*plan.payload, *(plan.files or {})], plan.context.user, record)
    if refused is not None:
        raise Forbidden(f"You may not {'set' if record is None else 'change'} the field {refused!r}.")


async def before(prepared: Prepared) -> None:
    """Step 4: before-hooks; values they change are not validated again."""
    plan = prepared.plan
    repository = plan.resource.repository
    if plan.existing is None:
        await run_hook(repository.before_store, plan.context, prepared.values)
    else:
        await run_hook(repository.before_update, plan.context, plan.resource.model(plan.existing), prepared.values)


async def persist(prepared: Prepared) -> Saved:
    """Step 5: files first, then the record."""
    plan = prepared.plan
    document, replaced = await save(plan.app, plan.resource, plan.fields, prepared.values, prepared.pending,
                                    prepared.record_id, plan.existing, plan.versions, plan.change)
    return Saved(document, None if plan.creating else replaced)


async def finish(prepared: Prepared, document: dict[str, Any]) -> Written:
    """Steps 6-7: after-hooks, once the record is written (after the framework's own), then the answer."""
    plan, context = prepared.plan, prepared.plan.context
    repository = plan.resource.repository
    if plan.creating:
        await run_hook(repository.stored, context, plan.resource.model(document))
    else:
        await after_user_update(plan.app, plan.resource, plan.fields, prepared.values, document["id"], context)
        await after_address_change(plan.app, plan.resource, plan.existing, document, context)
        await run_hook(repository.updated, context, plan.resource.model(document))
    fields = plan.fields
    if plan.acts_as_written:
        context.user = plan.resource.model(document)
        fields = plan.resource.fields(context)  # the answer is the new user's view of their own record
    if not plan.answer:
        return Written(document, {})
    document = dict(document)  # the answer's copy: computed values are added to it, never stored
    await fill(plan.app, plan.resource, context, [document], fields)
    data = serialize(plan.app, plan.resource, context, document, fields=fields) if plan.flags \
        else resource_object(plan.resource.name, fields, document)
    return Written(document, data)


def server_values(fields: list[Field], context: Context) -> dict[str, Any]:
    """What `value()` callbacks set when a record is created, whatever the payload said."""
    return {f.name: f.value_callback(context) for f in fields if f.value_callback is not None}


def empty_relations(resource: Resource, values: dict[str, Any]) -> dict[str, list[Any]]:
    """The BelongsToMany keys a new record does not set, as empty arrays: attach then adds to an array
    on every server (the embedded one skips `$addToSet` on a missing field)."""
    return {key: [] for decl in resource.model.relations.values() if decl.kind == "belongs_to_many"
            and (key := decl.local_key(resource.model)) not in values}


def expected_versions(version: Any) -> Versions:
    """The versions a `version` argument (GraphQL, MCP) accepts: None (any) when it is not given."""
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise BadRequest("version must be a whole number, the record's meta.version.")
    return frozenset((version,))


def check_version(document: dict[str, Any], versions: Versions) -> None:
    """PreconditionFailed unless `document` is at one of `versions` (None accepts any)."""
    if versions is not None and version_of(document) not in versions:
        raise PreconditionFailed()


async def run_hook(hook: Any, *args: Any) -> None:
    """Runs a repository hook, plain or `async`."""
    if inspect.isawaitable(result := hook(*args)):
        await result


async def remove(app: Restify, resource: Resource, context: Context, document: dict[str, Any],
                 versions: Versions = None) -> None:
    """Deletes an authorized record, then what hangs on it: the user's tokens, its files."""
    await before_remove(resource, context, document, versions)
    await after_remove(app, resource, context, await delete_record(app, resource, document, versions))


async def before_remove(resource: Resource, context: Context, document: dict[str, Any],
                        versions: Versions = None) -> None:
    """The version read, then the before-hook: nothing is deleted yet."""
    check_version(document, versions)
    await run_hook(resource.repository.before_delete, context, resource.model(document))


async def after_trash(resource: Resource, context: Context, trashed: dict[str, Any]) -> None:
    """A trashing's after-hook (soft deletes: `trashing.py`); the files stay, a restore needs them."""
    await run_hook(resource.repository.deleted, context, resource.model(trashed))


async def delete_record(app: Restify, resource: Resource, document: dict[str, Any],
                        versions: Versions = None) -> dict[str, Any]:
    """Deletes the record (at one of `versions`); returns it as this very delete removed it."""
    removed = await app.collection(resource).remove(document["id"], versions)
    if removed is None:
        raise NotFound()
    return removed


async def after_remove(app: Restify, resource: Resource, context: Context, removed: dict[str, Any]) -> None:
    """The user's tokens, the after-hook, then the files of the record as deleted (not as read
    before: an upload may have replaced one meanwhile)."""
    await after_user_delete(app, resource, removed["id"])
    await run_hook(resource.repository.deleted, context, resource.model(removed))
    await uploads.discard_files(app, [removed.get(f.name) for f in resource.fields(context) if f.is_file])


async def save(app: Restify, resource: Resource, fields: list[Field], values: dict[str, Any],
               pending: list[uploads.PendingFile], record_id: str,
               existing: dict[str, Any] | None,
               versions: Versions = None, change: SetChange | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Writes the uploads, then the record (a new one at version 1; an update at one of `versions`,
    with `change` made to its array in the same atomic update); a failed record write takes the new
    files back, a successful one deletes the files it replaced. Returns the record as written and as
    it was just before ({} when created or changed in place)."""
    written = await uploads.write_files(app, pending, record_id, resource.name)
    values.update(written)
    collection = app.collection(resource)
    replaced: dict[str, Any] = {}
    document: dict[str, Any] | None
    try:
        if existing is None:
            document = await collection.insert({**values, VERSION: 1, "id": record_id})
        elif change is not None:
            document = await collection.change_set(record_id, change.key, change.operation, change.ids, values,
                                                   versions)
        else:
            swapped = await collection.swap(record_id, values, versions)
            replaced, document = swapped if swapped else ({}, None)
    except DuplicateKey as error:
        await uploads.discard_files(app, written.values())
        raise ValidationFailed(unique_message(fields, error.field)) from None
    except BaseException:
        await uploads.discard_files(app, written.values())
        raise
    if document is None:
        await uploads.discard_files(app, written.values())
        raise NotFound()
    # What this write replaced (not what was read before it): racing uploads leave no orphan.
    await uploads.discard_files(app, [replaced.get(n) for n, url in written.items() if replaced.get(n) != url])
    return document, replaced
