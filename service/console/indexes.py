"""`restify indexes`: each repository's index plan beside the indexes the database has.

Compared by keys, never by name: the embedded server renames what it makes and lists every key as
ascending, and refuses a compound index that includes `_id` (where `serve` makes the field alone).
Those differences are said once at the top and beside each index concerned, not reported as drift.
"""
import asyncio
import sys

from service.config import Settings
from service.console.runtime import build, database_uri
from service.core.declarations.indexes import IndexState, Keys, index_plan, states
from storage import ExistingIndex, IndexSupport, Unavailable


def render_keys(keys: Keys) -> str:
    return "{" + ", ".join(f"{'_id' if name == 'id' else name}: {direction}" for name, direction in keys) + "}"


def _planned_line(state: IndexState) -> str:
    planned = state.planned
    unique = " unique" if planned.unique else ""
    line = f"  {state.status:<12} {render_keys(planned.keys)}{unique}  ({'; '.join(planned.reasons)})"
    if state.status == "not used":
        line += " — this server is not sent $text: search tests substrings"
    elif state.unsupported:
        line += f" — not supported by this server; {render_keys(state.keys)} serves instead"
    return line


def _extra_line(index: ExistingIndex) -> str:
    unique = " unique" if index.unique else ""
    return f"  {'not planned':<12} {render_keys(index.keys)}{unique}  (name {index.name})"


def _header(support: IndexSupport, auto: bool) -> list[str]:
    lines = [f"Server: {support.server}. Indexes are compared by their keys, not their names."]
    if not support.keeps_names:
        lines.append("This server renames the indexes it makes and lists every key as ascending (1).")
    if not support.id_in_compound:
        lines.append("This server refuses a compound index that includes _id: such an index is checked as "
                     "the fields before _id, which `serve` makes instead.")
    if not auto:
        lines.append("database.auto_indexes is off: `serve` makes only the unique indexes.")
    return lines


async def report(settings: Settings, uri: str) -> list[str]:
    app = build(settings, uri)
    try:
        support = await app.db.index_support()
        found = await states(app.db, index_plan(app.registry))
    finally:
        app.db.close()
    lines = _header(support, bool(settings.get("database", "auto_indexes")))
    missing = 0
    for collection, (planned, extra) in found.items():
        lines.append("")
        lines.append(collection)
        lines.extend(_planned_line(state) for state in planned)
        lines.extend(_extra_line(index) for index in extra)
        missing += sum(state.status not in ("exists", "not used") for state in planned)  # counted as planned
    count = sum(state.status != "not used" for planned, _ in found.values() for state in planned)
    lines.append("")
    lines.append(f"{count} planned, {count - missing} in place, {missing} missing or not unique.")
    return lines


def indexes(settings: Settings) -> int:
    """Prints the plan beside the database; the exit code is 0 whatever is missing."""
    with database_uri(settings) as uri:
        try:
            print("\n".join(asyncio.run(report(settings, uri))))
        except Unavailable:
            print("restify: the database is unavailable", file=sys.stderr)
            return 1
    return 0
