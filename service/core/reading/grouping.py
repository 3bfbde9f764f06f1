"""Reads an aggregation's parameters into a plan, and a plan's groups into the answer.

    group=user_id,created_at:month   metrics=count,sum:views,avg:views   sort=-count,group.user_id

Group keys are fields declared `.groupable()` (and the timestamps, by date, on every repository);
metrics read numbers declared `.aggregatable()`. A field the user may not see (hidden, private by
policy) is refused as an unknown one. Every refusal is a BadRequest naming the parameter.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.config import Settings
from service.core.declarations import TIMESTAMPS, Description, Field, describe, to_boolean, to_number
from service.core.kernel import BadRequest, choices
from storage import DATE_UNITS, GroupKey, Metric

AGGREGATE_PARAMETERS = ("group", "metrics", "sort")  # read here, not as the index reads them
METRIC_OPERATIONS = ("sum", "avg", "min", "max")  # besides count, each over one aggregatable field


@dataclass
class Aggregation:
    keys: list[GroupKey] = field(default_factory=list)
    descriptions: list[Description | None] = field(default_factory=list)  # None: a date's prefix
    metrics: list[Metric] = field(default_factory=list)
    sort: list[tuple[str, int]] = field(default_factory=list)  # (a metric's label or `group.<key>`, direction)
    most: int = 1000

    @property
    def expense(self) -> str | None:
        """Why this aggregation is an expensive query, or None: on the embedded server a group of several
        keys (one joined text per record) or by week (read by day, folded) takes seconds at 100,000."""
        if len(self.keys) > 1:
            return "an aggregation by several keys"
        if any(key.unit == "week" for key in self.keys):
            return "an aggregation by week"
        return None


def _refuse(parameter: str, message: str) -> BadRequest:
    return BadRequest(message, {parameter: [message]})


def group_keys(fields: list[Field]) -> dict[str, Description]:
    """The keys a user may group by: their groupable fields, and the timestamps (by date)."""
    keys = {f.name: describe(f) for f in fields if f.is_groupable and not (f.is_hidden or f.is_private)}
    for stamp in TIMESTAMPS:
        keys.setdefault(stamp, describe(Field(stamp).date()))
    return keys


def declares_aggregations(fields: list[Field]) -> bool:
    """Whether a repository's fields (as declared) offer aggregations: a group key or a metric."""
    return any(f.is_groupable or f.is_aggregatable for f in fields)


def aggregatable(fields: list[Field]) -> list[str]:
    """The fields a user may sum, average and take the least and greatest of."""
    return [f.name for f in fields if f.is_aggregatable and not (f.is_hidden or f.is_private)
            and describe(f).is_number]


def parse_aggregation(fields: list[Field], params: Mapping[str, str], settings: Settings) -> Aggregation:
    """The plan of `params` (`group`, `metrics`, `sort`) over the fields a user sees."""
    plan = Aggregation(most=int(settings.positive("aggregate", "max_groups")))
    keys = group_keys(fields)
    for part in (p.strip() for p in (params.get("group") or "").split(",")):
        name, _, unit = part.partition(":")
        if not part or name in (k.name for k in plan.keys):
            continue
        description = keys.get(name)
        if description is None:
            raise _refuse("group", f"The field {name!r} cannot be grouped; the groupable fields are: {choices(keys)}.")
        dated = description.type == "date"
        if unit and not dated or dated and (unit or "day") not in DATE_UNITS:
            raise _refuse("group", f"The group {part!r} is not allowed: only a date takes a unit, one of "
                                   f"{', '.join(DATE_UNITS)} (e.g. {name}:month).")
        plan.keys.append(GroupKey(name, (unit or "day") if dated else None))
        plan.descriptions.append(None if dated else description)
    plan.metrics = _metrics(params.get("metrics") or "count", aggregatable(fields))
    plan.sort = _sort(params.get("sort") or "", plan)
    return plan


def _metrics(raw: str, numbers: list[str]) -> list[Metric]:
    metrics: list[Metric] = []
    for part in (p.strip() for p in raw.split(",")):
        operation, _, name = part.partition(":")
        if not part:
            continue
        if operation == "count" and not name:
            metric = Metric("count")
        elif operation not in METRIC_OPERATIONS or not name:
            raise _refuse("metrics", f"The metric {part!r} is not one of count, "
                                     f"{', '.join(op + ':<field>' for op in METRIC_OPERATIONS)}.")
        elif name not in numbers:
            raise _refuse("metrics", f"The field {name!r} cannot be aggregated; the aggregatable fields are: "
                                     f"{choices(numbers)}.")
        else:
            metric = Metric(operation, name)
        if metric not in metrics:
            metrics.append(metric)
    return metrics or [Metric("count")]


def _sort(raw: str, plan: Aggregation) -> list[tuple[str, int]]:
    allowed = [*(f"group.{key.name}" for key in plan.keys), *(metric.label for metric in plan.metrics)]
    keys: list[tuple[str, int]] = []
    for part in (p.strip() for p in raw.split(",")):
        name = part.lstrip("-+")
        if not name:
            continue
        if name not in allowed:
            raise _refuse("sort", f"The aggregation cannot be sorted by {name!r}; it sorts by: {choices(allowed)}.")
        keys.append((name, -1 if part.startswith("-") else 1))
    # The group keys last, in their order: equal metrics come in a stable order.
    return keys + [(f"group.{key.name}", 1) for key in plan.keys if f"group.{key.name}" not in dict(keys)]


def _decoded(value: Any, description: Description | None) -> Any:
    """A group's key as the field's own type: servers answer booleans as 1, True or "true"."""
    if value is None or description is None:
        return value
    if description.type == "boolean":
        return to_boolean(value if not isinstance(value, float) else int(value))
    if description.is_number and isinstance(value, str):
        return to_number(value)
    return value


def _order(value: Any) -> tuple[int, Any]:
    """Null first, then the values (of one type within one key)."""
    return (0, 0) if value is None else (1, value)


def aggregation_answer(plan: Aggregation, rows: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, Any]:
    """`{"data": [{"group": {...}, "count": n, ...}], "meta": {"groups": n}}`, in the plan's sort."""
    if len(rows) > plan.most:
        raise _refuse("group", f"The aggregation has more than {plan.most} groups (aggregate.max_groups); "
                               "group by fewer fields, a coarser date unit, or filter the records.")
    data = [{"group": {key.name: _decoded(value, description)
                       for key, description, value in zip(plan.keys, plan.descriptions, values, strict=True)},
             **metrics} for values, metrics in rows]
    for name, direction in reversed(plan.sort):
        data.sort(key=lambda item: _order(item["group"][name[6:]] if name.startswith("group.") else item[name]),
                  reverse=direction < 0)
    return {"data": data, "meta": {"groups": len(data)}}
