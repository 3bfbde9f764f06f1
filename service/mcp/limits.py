"""`[mcp] max_result_bytes`: a tool result an agent can read whole.

A page of records over the cap keeps as many records as fit and says so under "cut"; anything
else is cut as text, followed by a note (its JSON is then incomplete). Both say how to ask for less.
"""
import json
from typing import Any

ASK_FOR_LESS = ("Ask for less: a smaller perPage, a narrower search or filters, fewer includes, or one record "
                "at a time with the show tool.")


def dumps(body: Any) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fewer_records(body: dict[str, Any], limit: int) -> dict[str, Any] | None:
    """`body` with only the first records of its "data" list that fit, or None when that cannot help."""
    records = body.get("data")
    if not isinstance(records, list):
        return None

    def cut_to(count: int) -> dict[str, Any]:
        message = (f"This result was cut to the first {count} of its {len(records)} records to stay under "
                   f"{limit} bytes (mcp.max_result_bytes). {ASK_FOR_LESS}")
        return {**body, "data": records[:count], "cut": {"message": message, "returned": count,
                                                         "records": len(records)}}

    low, high = 0, len(records) - 1  # the most records that fit, by bisection
    if _size(dumps(cut_to(0))) > limit:
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if _size(dumps(cut_to(middle))) <= limit:
            low = middle
        else:
            high = middle - 1
    return cut_to(low)


def cut_text(text: str, limit: int) -> tuple[str, str]:
    """The first bytes of `text` and the note that follows them, together at most `limit` bytes."""
    note = (f"[The result above was cut at {limit} bytes (mcp.max_result_bytes) and is incomplete JSON. "
            f"{ASK_FOR_LESS}]")
    room = max(0, limit - _size(note))
    return text.encode("utf-8")[:room].decode("utf-8", "ignore"), note
