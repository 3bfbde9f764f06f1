"""A count that leaves out a key's values, counted as groups of that key.

A search through related records is counted as disjoint parts (storage/search_parts.py); its own
fields' part is "the text matches, and the key is none of the related ids" (`k nin ids`). The
embedded nx-27017 server runs the substring test alone in SQL (12 ms at 5,000 posts) and `nin` alone
too (10 ms), but the two together take 60-80 ms, all of it holding the database for everyone else's
reads. Grouped by the key, the same records are counted in one SQL pass (about 15 ms): the part's
count is the sum of the groups whose key is none of the ids. `nin` also admits a missing or null key,
which groups under null: counted too. Where a group's key is not a plain value (an array, a
document, a number; the embedded server gives an array or a document as its JSON text, so a text that
starts like one counts as one) the part is counted as it is; likewise past GROUPS groups.
"""
from dataclasses import replace
from typing import Any

from bson import ObjectId

from storage.clauses import condition_clause
from storage.filters import Filter

GROUPS = 10_000  # groups read before the part is counted as it is instead
_PLAIN = (str, ObjectId)


def outside_groups(part: Filter) -> tuple[Filter, str, list[Any]] | None:
    """(`part` without its one `nin` condition, that condition's key, the values as the server is sent
    them), when the part has exactly one, on a stored field other than the id; else None."""
    excluded = [condition for condition in part.conditions if condition[1] == "nin"]
    if len(excluded) != 1 or excluded[0][0] == "id":
        return None
    name, _, values = excluded[0]
    rest = replace(part, conditions=tuple(c for c in part.conditions if c is not excluded[0]))
    sent = condition_clause(name, "nin", values)[name]["$nin"]
    if not all(isinstance(value, _PLAIN) for value in sent):
        return None
    return rest, name, sent


def key_groups(match: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [{"$match": match}, {"$group": {"_id": f"${key}", "n": {"$sum": 1}}}, {"$limit": GROUPS + 1}]


def count_outside(rows: list[dict[str, Any]], values: list[Any]) -> int | None:
    """The records of the groups whose key is none of `values`; None when it cannot be told from the
    groups (too many, or a key that is not a plain value)."""
    if len(rows) > GROUPS:
        return None
    outside, total = set(values), 0
    for row in rows:
        key = row["_id"]
        if (key is not None and not isinstance(key, _PLAIN)) or (isinstance(key, str) and key[:1] in ("[", "{")):
            return None  # the embedded server groups an array or a document under its JSON text
        if key not in outside:
            total += row["n"]
    return total
