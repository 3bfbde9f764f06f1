"""Aggregations: records counted and summed by group, in one pipeline both servers answer alike.

    [{"$match": <filter>}, {"$group": {"_id": <one expression>, <metric>: ...}}, {"$limit": n}]

The embedded nx-27017 server evaluates a `$group` `_id` only when it is one expression: an object or
an array of keys comes back as itself, one group of every record; `$toDate` and `$dateTrunc` are not
evaluated either. So the key is one expression on both servers (`tests/storage/test_grouping.py`
pins it on each):

- one plain key: the field itself (`"$user_id"`), which both servers group natively;
- a date (stored as an ISO text, as the write path stores dates): its prefix, `$substrBytes` of 4
  (year), 7 (month) or 10 (day) characters (ISO texts are ASCII); a week is read by day and folded
  here into the ISO week that holds it (named by its Monday);
- several keys: one text, each key as `"v" + $toString(value)`, or `"n"` for null and missing,
  joined by a unit separator, and decoded here. Servers write values differently (a boolean is
  `true` on MongoDB, `True` or `1` on the embedded server): the caller reads each key's text with
  the field's own coercion.

Metrics: `count`, and per field its `$sum`, `$avg`, `$min`, `$max`. Days folded into weeks keep exact
averages: there an average is read as the sum over how many values are numbers (`$isNumber`). A sum of
no numbers is 0 on MongoDB and null on the embedded server: 0 here.

What each costs on the embedded server at 100,000 records (it runs some expressions in SQL, others in
Python for every record): a plain key, `$substrBytes`, `$sum`, `$avg`, `$min`, `$max` about 0.2-0.4 s;
`$concat`, `$ifNull`, `$cond` about 3-5 s (so `$substr`, which it reads in Python, is not sent, and
several keys, which need `$concat`, cost that much there; MongoDB reads them all from its own engine).
"""
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

DATE_UNITS = {"year": 4, "month": 7, "day": 10, "week": 10}  # the prefix a unit is read by
SEPARATOR = "\x1f"
OPERATIONS = ("count", "sum", "avg", "min", "max")


@dataclass(frozen=True)
class GroupKey:
    name: str               # the stored field
    unit: str | None = None  # a date's unit (DATE_UNITS), else None: the value itself


@dataclass(frozen=True)
class Metric:
    operation: str          # one of OPERATIONS
    name: str | None = None  # the field it reads; None for count

    @property
    def label(self) -> str:
        """Its name in an answer: `count`, `sum_views`, `avg_views`..."""
        return self.operation if self.name is None else f"{self.operation}_{self.name}"


Row = tuple[tuple[Any, ...], dict[str, Any]]  # a group's key values (texts for dates) and its metrics


def _key_expression(key: GroupKey) -> Any:
    if key.unit is None:
        return f"${key.name}"
    return {"$substrBytes": [f"${key.name}", 0, DATE_UNITS[key.unit]]}


def _joined(keys: Sequence[GroupKey]) -> Any:
    if not keys:
        return None  # one group of every record
    if len(keys) == 1:
        return _key_expression(keys[0])
    parts: list[Any] = []
    for position, key in enumerate(keys):
        value = _key_expression(key)
        text = value if key.unit is not None else {"$toString": value}
        parts += [SEPARATOR] if position else []
        parts.append({"$ifNull": [{"$concat": ["v", text]}, "n"]})
    return {"$concat": parts}


def _accumulators(metrics: Sequence[Metric], folded: bool) -> dict[str, Any]:
    """The `$group` accumulators every metric needs, each once: `count`, `sum|f`, `avg|f`, `min|f`, `max|f`;
    an average of groups `folded` into weeks as `sum|f` over `n|f`, the values that are numbers."""
    wanted: dict[str, Any] = {"count": {"$sum": 1}}
    for metric in metrics:
        if metric.name is None:
            continue
        field = f"${metric.name}"
        if metric.operation == "sum" or metric.operation == "avg" and folded:
            wanted[f"sum|{metric.name}"] = {"$sum": field}
        if metric.operation == "avg" and folded:
            wanted[f"n|{metric.name}"] = {"$sum": {"$cond": [{"$isNumber": field}, 1, 0]}}
        elif metric.operation in ("avg", "min", "max"):
            wanted[f"{metric.operation}|{metric.name}"] = {f"${metric.operation}": field}
    return {name.replace("|", "__"): value for name, value in wanted.items()}


def group_pipeline(query: dict[str, Any], keys: Sequence[GroupKey], metrics: Sequence[Metric],
                   most: int) -> list[dict[str, Any]]:
    """The pipeline of an aggregation over the records `query` matches, reading at most enough groups
    to tell whether there are more than `most` (a week's days: seven times as many)."""
    folded = any(key.unit == "week" for key in keys)
    read = most * 7 if folded else most
    stages: list[dict[str, Any]] = [{"$match": query}] if query else []
    return [*stages, {"$group": {"_id": _joined(keys), **_accumulators(metrics, folded)}}, {"$limit": read + 1}]


def pinned_group(equals: Mapping[str, Any], keys: Sequence[GroupKey], metrics: Sequence[Metric]) -> tuple[Any] | None:
    """The key of the only group there can be, when the filter fixes the one plain key (`equals`) and
    every metric is a count: that group is a count of the filter. The embedded server answers a `$group`
    by loading every matched record, a count of an indexed equality from the index (6.7 -> 1.1 ms over 40
    records of 65,000 characters)."""
    if len(keys) == 1 and keys[0].unit is None and keys[0].name in equals \
            and all(metric.operation == "count" for metric in metrics):
        return (equals[keys[0].name],)
    return None


def _split(raw: Any, keys: Sequence[GroupKey]) -> tuple[Any, ...]:
    if not keys:
        return ()
    if len(keys) == 1:
        return (raw,)
    if not isinstance(raw, str):
        return (None,) * len(keys)
    return tuple(None if part == "n" else part[1:] for part in raw.split(SEPARATOR, len(keys) - 1))


def _monday(day: Any) -> Any:
    try:
        found = date.fromisoformat(str(day)[:10])
    except ValueError:
        return day
    return (found - timedelta(days=found.weekday())).isoformat()


def _dated(values: tuple[Any, ...], keys: Sequence[GroupKey]) -> tuple[Any, ...]:
    """Date prefixes as answered (a missing date is "" on MongoDB: null), days folded into weeks."""
    out = []
    for value, key in zip(values, keys, strict=True):
        if key.unit is not None:
            value = None if value in (None, "") else _monday(value) if key.unit == "week" else str(value)
        out.append(value)
    return tuple(out)


def _merge(into: dict[str, Any], other: dict[str, Any]) -> None:
    for name, value in other.items():
        if value is None:
            continue
        kept = into.get(name)
        if kept is None:
            into[name] = value
        elif name.startswith("min__"):
            into[name] = min(kept, value)
        elif name.startswith("max__"):
            into[name] = max(kept, value)
        else:
            into[name] = kept + value


def grouped_rows(documents: list[dict[str, Any]], keys: Sequence[GroupKey], metrics: Sequence[Metric]) -> list[Row]:
    """The groups of a pipeline's answer, decoded and folded, with each metric under its label."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for document in documents:
        values = _dated(_split(document.get("_id"), keys), keys)
        accumulated = {name: value for name, value in document.items() if name != "_id"}
        if values in groups:
            _merge(groups[values], accumulated)
        else:
            groups[values] = accumulated
    return [(values, _metrics(accumulated, metrics)) for values, accumulated in groups.items()]


def _metrics(accumulated: dict[str, Any], metrics: Sequence[Metric]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in metrics:
        if metric.name is None:
            out[metric.label] = accumulated.get("count") or 0
        elif metric.operation == "sum":
            out[metric.label] = accumulated.get(f"sum__{metric.name}") or 0
        elif metric.operation == "avg" and f"n__{metric.name}" not in accumulated:
            out[metric.label] = accumulated.get(f"avg__{metric.name}")
        elif metric.operation == "avg":
            numbers = accumulated.get(f"n__{metric.name}") or 0
            out[metric.label] = (accumulated.get(f"sum__{metric.name}") or 0) / numbers if numbers else None
        else:
            out[metric.label] = accumulated.get(f"{metric.operation}__{metric.name}")
    return out
