"""A search part's count, made as groups of the related key it keeps in or leaves out.

A search through related records is counted as disjoint parts (storage/search_parts.py): "the key
is one of the related ids" (`k in ids`) and "the text matches, and the key is none of them"
(`k nin ids`), the own fields' part. The embedded nx-27017 server runs either set test by reading
every document outside SQL's indexes: `in` about 11-17 ms at 5,000 posts whatever the ids' number,
the substring test beside `nin` 60-80 ms, all of it holding the database for everyone else's reads.
Grouped by the key, the same records are counted in one SQL pass (all of them in about 5 ms, the
substring's matches in about 15): the part's count is the sum of the groups whose key is (or is
none) of the ids. `nin` also admits a missing or null key, which groups under null: counted there,
never by `in`. Where a group's key is not a plain value (an array, a document, a number; the embedded
server gives an array or a document as its JSON text, so a text that starts like one counts as one)
the part is counted as it is; likewise past GROUPS groups.
"""
from dataclasses import dataclass, replace
from typing import Any

from bson import ObjectId

from storage.clauses import condition_clause
from storage.filters import Filter

GROUPS = 10_000  # groups read before the part is counted as it is instead
_PLAIN = (str, ObjectId)


@dataclass(frozen=True)
class KeyGroups:
    """A part as the groups of `key` over `rest`: those whose key is among `values` (`inside`), or none of them."""
    rest: Filter
    key: str
    values: list[Any]  # as the server is sent them
    inside: bool


def key_groups_of(part: Filter) -> KeyGroups | None:
    """The part's one set test on a stored key other than the id, taken out of it: exactly one `nin`
    (the own fields' part), or else exactly one `in` (a related part); else None."""
    for operator in ("nin", "in"):
        tests = [condition for condition in part.conditions if condition[1] == operator]
        if tests:
            break
    if len(tests) != 1 or tests[0][0] == "id":
        return None
    name, _, values = tests[0]
    sent = condition_clause(name, operator, values)[name][f"${operator}"]
    if not all(isinstance(value, _PLAIN) for value in sent):
        return None
    rest = replace(part, conditions=tuple(c for c in part.conditions if c is not tests[0]))
    return KeyGroups(rest, name, sent, inside=operator == "in")


def key_groups(match: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [*([{"$match": match}] if match else []), {"$group": {"_id": f"${key}", "n": {"$sum": 1}}},
            {"$limit": GROUPS + 1}]


def count_groups(rows: list[dict[str, Any]], groups: KeyGroups) -> int | None:
    """The records of the groups whose key is among `groups.values` (or, not `inside`, none of them); None
    when it cannot be told from the groups (too many, or a key that is not a plain value)."""
    if len(rows) > GROUPS:
        return None
    values, total = set(groups.values), 0
    for row in rows:
        key = row["_id"]
        if (key is not None and not isinstance(key, _PLAIN)) or (isinstance(key, str) and key[:1] in ("[", "{")):
            return None  # the embedded server groups an array or a document under its JSON text
        if (key in values) == groups.inside:
            total += row["n"]
    return total
