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
from service.core import confirmations, operations
from service.core.app import Restify
from service.core.context import Context
from service.core.errors import Forbidden
from service.core.models import Model

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
    "bulk-store": Hints(read_only=False, idempotent=False),
    "bulk-update": Hints(read_only=False),
    "bulk-delete": Hints(read_only=False, destructive=True),
}


def hints(operation: str) -> Hints:
    return HINTS.get(operation, Hints(read_only=False, destructive=True, idempotent=False))  # unknown: fear the worst


def turned_off(settings: Settings, operation: str) -> bool:
    """`[mcp] read_only` turns off every tool that writes."""
    return bool(settings.get("mcp", "read_only")) and not hints(operation).read_only


def confirming(settings: Settings, operation: str) -> bool:
    return hints(operation).destructive and bool(settings.get("mcp", "confirm_destructive"))


def _version(record: dict[str, Any]) -> str:
    """What a preview is bound to: the record's version (each write changes it), else its updated_at,
    else all it showed."""
    version = (record.get("meta") or {}).get("version")
    if isinstance(version, int):
        return str(version)
    attributes = record.get("attributes") or {}
    return str(attributes.get("updated_at") or confirmations.canonical(record))


def shown_version(record: dict[str, Any]) -> int | None:
    """The `meta.version` a preview showed (None when the record shows none)."""
    version = (record.get("meta") or {}).get("version")
    return version if isinstance(version, int) else None


Run = Callable[[dict[str, int | None]], Awaitable[dict[str, Any]]]


async def after_confirmation(app: Restify, tool: str, records: list[dict[str, Any]], arguments: dict[str, Any],
                             user: Model | None, run: Run) -> dict[str, Any]:
    """Runs a destructive call on `records` (as the user sees them now, every one authorized) when
    `arguments` (the call's, as sent) carry a valid confirmation for them as they are now: `run` gets
    the version each record showed, to delete it only at that version. Otherwise answers a preview
    and a new confirmation."""
    arguments = dict(arguments)
    token = arguments.pop(CONFIRM, None)
    versions = {record["id"]: _version(record) for record in records}
    user_id = str(user.id) if user is not None else ""
    note = ""
    if token is not None:
        previewed = await confirmations.redeem(app, user_id, tool, arguments, str(token))
        if previewed == versions:
            # At the versions it previewed: a change since is refused inside the delete itself, not
            # only by the comparison above.
            return await run({record["id"]: shown_version(record) for record in records})
        note = (" The confirmation was not used: the record changed since it was previewed."
                if previewed is not None else
                " The confirmation was not accepted (wrong, used, expired, or for another call).")
    token, expires = await confirmations.issue(app, user_id, tool, arguments, versions)
    message = (f"Nothing was changed.{note} To delete, call {tool} again with the same arguments and "
               f'"{CONFIRM}": the token below, before {expires}; it works once.')
    # The token comes first so that a result cut to max_result_bytes still carries it.
    return {"message": message, CONFIRM: token, "expires_at": expires,
            "preview": {"action": "delete", "ids": list(versions), "records": records}}


async def delete_after_confirmation(app: Restify, tool: str, resource: str, id: str, arguments: dict[str, Any],
                                    user: Model | None, context: Callable[[], Context],
                                    accepted: Collection[int] | None = None) -> dict[str, Any]:
    """Deletes record `id` after the preview and its confirmation (`after_confirmation`), at the
    version it previewed and one of the caller's `accepted` versions, if given."""
    record = (await operations.show(app, resource, id, context()))["data"]  # 404 for hidden and missing alike
    if not (record.get("meta") or {}).get("authorizedToDelete", True):
        raise Forbidden()  # say so now: a preview of what cannot happen would only mislead

    async def delete(shown: dict[str, int | None]) -> dict[str, Any]:
        version = shown[record["id"]]
        at = frozenset((version,)) if version is not None else accepted
        if accepted is not None and at is not accepted:
            at = at & frozenset(accepted)
        await operations.delete(app, resource, id, context(), versions=at)
        return {"deleted": True, "id": id}

    return await after_confirmation(app, tool, [record], arguments, user, delete)
