"""An index page's records (with their relations), and what they are charged to the answer's budget
(`service.core.reading.envelope` writes what frames them)."""
from typing import TYPE_CHECKING, Any

from service.core.declarations import Budget, Context, Resource, Room, encoded_size, own_size
from service.core.reading.loading import load_related
from service.core.reading.serializer import Attributes, flat_object, record_meta, resource_object, visible, \
    with_relationships

if TYPE_CHECKING:
    from service.core.declarations import Restify

Rows = list[tuple[dict[str, Any], Any]]  # (document, the record `show` was asked about)
Tree = dict[str, Any]  # the relations to load (`query.RelationTree`)
Kept = dict[str, frozenset[str]]  # the fieldsets (`fieldsets.Fieldsets`)


def measured_last(spent: Budget, tree: Tree) -> bool:
    """Whether a page is measured as it is built: not when nothing is built after it (no relations, no
    room to cut it to) and its door measures the encoded answer (`Budget.door_measures`)."""
    return not (spent.door_measures and not tree and spent.room is None)


async def page_records(app: "Restify", resource: Resource, context: Context, gate: Any, rows: Rows, fields: list,
                       tree: Tree, chosen: Kept, spent: Budget) -> tuple[list[dict[str, Any]], list[int]]:
    """The page's resource objects with their relations (without any, `flat_object`s: `Context.flat_records`),
    charged to `spent`, and their sizes. A page that may be cut builds what may fit, related records once."""
    keep, shown, room = chosen.get(resource.name), visible(fields), spent.room
    # A fieldset: only what it keeps is built (and sized).
    writer = Attributes([f for f in shown if f.name in keep] if keep is not None else shown, keep)
    data: list[dict[str, Any]] = []
    sizes: list[int] = []
    flat = context.flat_records = context.flat_records and not tree
    flags = gate.shown_flags() if context.shows_flags and not flat else None
    for d, record in rows:
        item = flat_object(writer, d) if flat else \
            resource_object(resource.name, writer, d, None, record_meta(flags(record) if flags else {}, d))
        size = own_size(item) if room is not None else 0  # a page that is not cut is sized at once
        if room is not None:
            if sum(sizes) + size > room.bytes:
                break  # the records past what fits are not built
            spent.charge(size)
        data.append(item)
        sizes.append(size)
    if room is None and measured_last(spent, tree):
        # The records' own bytes: the page's without its brackets and commas (the caller's).
        spent.charge(encoded_size(data) - 2 - max(len(data) - 1, 0))
    if tree:
        documents = [d for d, _ in rows[:len(data)]]
        loaded = await load_related(app, resource, context, documents, tree, spent=spent, keep=chosen,
                                    copies=spent.copies and room is None)
        for position, item in enumerate(data):
            with_relationships(item, loaded.relationships[item["id"]])
            sizes[position] += loaded.bytes[item["id"]]
    return data, sizes


def charged_page(spent: Budget, body: dict[str, Any], data: list[dict[str, Any]], sizes: list[int],
                 records: int, tree: Tree) -> list[dict[str, Any]]:
    """The records of the answer `body` frames, once its frame is charged to `spent`: all of them, or
    (with room to cut the page to) the most that fit beside the note that says it was cut."""
    if not measured_last(spent, tree):
        return data
    frame = encoded_size(body)  # the envelope, around an empty list of records
    if spent.room is not None:
        kept = _fitting(spent.room, frame, sizes, records)
        if kept < records:
            data, spent.cut = data[:kept], (kept, records)
    spent.charge(frame + max(len(data) - 1, 0))
    return data


def _fitting(room: Room, frame: int, sizes: list[int], records: int) -> int:
    if len(sizes) == records and frame + sum(sizes) + max(records - 1, 0) <= room.bytes:
        return records
    kept, used = 0, frame
    for size in sizes:
        if used + size + (kept > 0) + room.note(kept + 1, records) > room.bytes:
            break
        used += size + (kept > 0)
        kept += 1
    return kept
