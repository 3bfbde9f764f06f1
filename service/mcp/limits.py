"""`[mcp] max_result_bytes`: a tool result an agent can read whole.

A page of records over the cap keeps as many records as fit and says so under "cut"; anything
else is cut as text, followed by a note (its JSON is then incomplete). Both say how to ask for less.
An index tool's page is cut while it is built (`room`): the records past what fits are neither
serialized nor given relations, and the relations of those that fit are counted, not encoded.
"""
import json
from typing import Any

from service.core.declarations.budget import Room

ASK_FOR_LESS = ("Ask for less: a smaller perPage, a narrower search or filters, fewer includes, or one record "
                "at a time with the show tool.")


def dumps(body: Any) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut_note(kept: int, records: int, limit: int) -> dict[str, Any]:
    """The "cut" member of a page cut to its first `kept` of `records` records."""
    message = (f"This result was cut to the first {kept} of its {records} records to stay under "
               f"{limit} bytes (mcp.max_result_bytes). {ASK_FOR_LESS}")
    return {"message": message, "returned": kept, "records": records}


def note_size(kept: int, records: int, limit: int) -> int:
    """The bytes `,"cut":{...}` adds to a page."""
    return _size(dumps({"cut": cut_note(kept, records, limit)})) - 1


def cut_page(body: dict[str, Any], kept: int, records: int, limit: int) -> dict[str, Any]:
    """`body` (a page of at least `kept` records, of `records` in all) with its first `kept` records,
    saying it was cut."""
    return {**body, "data": body["data"][:kept], "cut": cut_note(kept, records, limit)}


def fewer_records(body: dict[str, Any], limit: int, records: int | None = None) -> dict[str, Any] | None:
    """`body` with only the first records of its "data" list that fit, or None when that cannot help
    (`records`: how many the whole page had, when `body` holds only some of them)."""
    data = body.get("data")
    if not isinstance(data, list):
        return None
    records = len(data) if records is None else records
    low, high = 0, len(data) - 1  # the most records that fit, by bisection
    if _size(dumps(cut_page(body, 0, records, limit))) > limit:
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if _size(dumps(cut_page(body, middle, records, limit))) <= limit:
            low = middle
        else:
            high = middle - 1
    return cut_page(body, low, records, limit)


def cut_text(text: str, limit: int) -> tuple[str, str]:
    """The first bytes of `text` and the note that follows them, together at most `limit` bytes."""
    note = (f"[The result above was cut at {limit} bytes (mcp.max_result_bytes) and is incomplete JSON. "
            f"{ASK_FOR_LESS}]")
    room = max(0, limit - _size(note))
    return text.encode("utf-8")[:room].decode("utf-8", "ignore"), note


def room(limit: int, answer_limit: int | None) -> Room:
    """What an index tool's page may take: `limit`, within the answer's own budget."""
    return Room(min(limit, answer_limit) if answer_limit is not None else limit,
                lambda kept, records: note_size(kept, records, limit))
