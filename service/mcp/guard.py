"""Guardrails for agents: what each tool may do (its MCP annotations), which tools a read-only
server turns off, and the preview-then-confirm step in front of a destructive tool.

`[mcp] confirm_destructive` (default true): the first call of a destructive tool answers, as a
normal result, what it would change and a `confirm` token, and changes nothing; the same call
with `confirm` added runs it — if the records are still as previewed. Otherwise (changed
meanwhile, token used, expired, or for another call) it answers a fresh preview.
"""
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

from service.config import Settings
from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.declarations.models import Model
from service.core.kernel.errors import Forbidden
from service.core.operations import attaching, confirmations, crud as operations

CONFIRM = "confirm"


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations: what a client may tell its human before a call."""
    read_only: bool
    destructive: bool = False  # removes records (an update changes only what it is sent)
    idempotent: bool = True


HINTS = {
    "index": Hints(read_only=True), "show": Hints(read_only=True), "profile": Hints(read_only=True),
    "store": Hints(read_only=False, idempotent=False),  # each call creates another record
    "update": Hints(read_only=False),
    "delete": Hints(read_only=False, destructive=True),
    "attach": Hints(read_only=False),  # the ids end up attached however often it is called
    "detach": Hints(read_only=False, destructive=True), "sync": Hints(read_only=False, destructive=True),
    # Actions and getters (service/mcp/extensions.py): an action's own `destructive` flag decides that hint.
    "action": Hints(read_only=False, idempotent=False), "getter": Hints(read_only=True),
    "bulk-store": Hints(read_only=False, idempotent=False),
    "bulk-update": Hints(read_only=False),
    "bulk-delete": Hints(read_only=False, destructive=True),
    # The caller's own tokens (service/mcp/tools.py): revoking one cannot be taken back.
    "tokens-list": Hints(read_only=True), "tokens-revoke": Hints(read_only=False, destructive=True),
}


def hints(operation: str) -> Hints:
    return HINTS.get(operation, Hints(read_only=False, destructive=True, idempotent=False))  # unknown: fear the worst


def turned_off(settings: Settings, operation: str) -> bool:
    """`[mcp] read_only` turns off every tool that writes."""
    return bool(settings.get("mcp", "read_only")) and not hints(operation).read_only


def confirming(settings: Settings, operation: str) -> bool:
    return confirms(settings, hints(operation).destructive)


def confirms(settings: Settings, destructive: bool) -> bool:
    """`[mcp] confirm_destructive`: a destructive call previews first."""
    return destructive and bool(settings.get("mcp", "confirm_destructive"))


def two_steps(preview: str) -> str:
    """What a destructive tool's description says of its preview (with the keys `preview` lists)."""
    return (' Two steps: the first call changes nothing and returns {"message", "confirm": "<token>", '
            f'"expires_at", "preview": {{{preview}}}}}; show the preview to your user, and only if they agree call '
            'again with the same arguments plus "confirm": "<token>" (single-use, valid 5 minutes; a record changed '
            'meanwhile gives a new preview instead).')


def _version(record: dict[str, Any]) -> str:
    """What a preview is bound to: the record's version (each write changes it), else its updated_at,
    else all it showed."""
    version = (record.get("meta") or {}).get("version")
    if isinstance(version, int):
        return str(version)
    attributes = record.get("attributes") or {}
    return str(attributes.get("updated_at") or confirmations.canonical(record))


async def delete_after_confirmation(app: Restify, tool: str, resource: str, id: str, arguments: dict[str, Any],
                                    user: Model | None, context: Callable[[], Context],
                                    accepted: Collection[int] | None = None) -> dict[str, Any]:
    """Deletes record `id` when `arguments` (the call's, as sent) carry a valid confirmation for it as
    it is now; otherwise answers a preview and a new confirmation."""
    record = (await operations.show(app, resource, id, context()))["data"]  # 404 for hidden and missing alike
    if not (record.get("meta") or {}).get("authorizedToDelete", True):
        raise Forbidden()  # say so now: a preview of what cannot happen would only mislead

    async def delete() -> dict[str, Any]:
        await operations.delete(app, resource, id, context(), versions=previewed_versions(record, accepted))
        return {"deleted": True, "id": id}

    return await records_after_confirmation(app, tool, [record], arguments, user, delete, changed="the record")


async def records_after_confirmation(app: Restify, tool: str, records: list[dict[str, Any]], arguments: dict[str, Any],
                                     user: Model | None, run: Callable[[], Awaitable[dict[str, Any]]],
                                     changed: str = "a record") -> dict[str, Any]:
    """Deletes `records` (as the user sees them now, every one authorized) by `run()` after the preview
    and its confirmation; `run` deletes each at the version it showed (`shown_version`)."""
    preview = {"action": "delete", "ids": [record["id"] for record in records], "records": records}
    return await confirm_or_preview(app, tool, arguments, user, {r["id"]: _version(r) for r in records}, run,
                                    preview, "delete", changed=changed)


async def relation_change_after_confirmation(app: Restify, tool: str, resource: str, id: str, operation: str,
                                             relation: str, ids: Any, arguments: dict[str, Any],
                                             user: Model | None, context: Callable[[], Context],
                                             accepted: Collection[int] | None = None) -> dict[str, Any]:
    """Detach or sync as `delete_after_confirmation` deletes: the preview names the ids it would
    attach and detach (checked and authorized as the change would be, so a refusal comes at once)."""
    planned = await attaching.preview(app, resource, id, operation, relation, {relation: ids}, context())
    record = planned["record"]

    async def change() -> dict[str, Any]:
        return await attaching.change(app, resource, id, operation, relation, {relation: ids}, context(),
                                      versions=previewed_versions(record, accepted))

    preview = {"action": operation, "ids": [record["id"]], "records": [record], "relation": relation,
               "attach": planned["attach"], "detach": planned["detach"]}
    return await confirm_or_preview(app, tool, arguments, user, {record["id"]: _version(record)}, change,
                                    preview, operation, changed="the record")


def shown_version(record: dict[str, Any]) -> int | None:
    """The `meta.version` a preview showed (None when the record shows none)."""
    version = (record.get("meta") or {}).get("version")
    return version if isinstance(version, int) else None


def previewed_versions(record: dict[str, Any], accepted: Collection[int] | None) -> Collection[int] | None:
    """A confirmed call runs at the version it previewed (and the caller's `version`, if given): a
    change since is refused inside the write itself, not only by comparing the preview."""
    shown = shown_version(record)
    if shown is None:
        return accepted
    at = frozenset((shown,))
    return at & frozenset(accepted) if accepted is not None else at


async def confirm_or_preview(app: Restify, tool: str, arguments: dict[str, Any], user: Model | None,
                             versions: dict[str, str], run: Callable[[], Awaitable[dict[str, Any]]],
                             preview: dict[str, Any], verb: str, changed: str = "a record") -> dict[str, Any]:
    """Runs `run` when `arguments` (the call's, as sent) carry a valid confirmation for records still at
    `versions`; otherwise answers `preview` and a new confirmation, changing nothing."""
    arguments = dict(arguments)
    token = arguments.pop(CONFIRM, None)
    user_id = str(user.id) if user is not None else ""
    note = ""
    if token is not None:
        previewed = await confirmations.redeem(app, user_id, tool, arguments, str(token))
        if previewed == versions:
            return await run()
        note = (f" The confirmation was not used: {changed} changed since it was previewed."
                if previewed is not None else
                " The confirmation was not accepted (wrong, used, expired, or for another call).")
    token, expires = await confirmations.issue(app, user_id, tool, arguments, versions)
    message = (f"Nothing was changed.{note} To {verb}, call {tool} again with the same arguments and "
               f'"{CONFIRM}": the token below, before {expires}; it works once.')
    # The token comes first so that a result cut to max_result_bytes still carries it.
    return {"message": message, CONFIRM: token, "expires_at": expires, "preview": preview}
