"""The JSON Schemas of an aggregation's own parameters (`group`, `metrics`, `sort`), which the MCP
aggregate tool and the OpenAPI document publish; read by `service.core.reading.grouping`."""
from typing import Any

from service.core.declarations import Field
from service.core.reading import aggregatable, group_keys
from storage import DATE_UNITS

Schema = dict[str, Any]


def aggregate_schemas(fields: list[Field]) -> dict[str, Schema]:
    """`group`, `metrics` and `sort`, by name, as texts (REST's query values)."""
    keys = group_keys(fields)
    dated = [name for name, description in keys.items() if description.type == "date"]
    numbers = aggregatable(fields)
    metrics = ["count", *(f"{op}:{name}" for name in numbers for op in ("sum", "avg", "min", "max"))]
    return {
        "group": {"type": "string", "description": (
            f"Comma-separated group keys: {', '.join(sorted(keys))}; a date takes a unit, one of "
            f"{', '.join(DATE_UNITS)} ({dated[0]}:month; day without one). Without it, one group of every "
            "record. More groups than aggregate.max_groups is a 400.")},
        "metrics": {"type": "string", "default": "count", "description": (
            f"Comma-separated metrics: {', '.join(metrics)}. Each is answered as <op>_<field> (sum_views), "
            "count as count.")},
        "sort": {"type": "string", "description": (
            "Comma-separated metrics (-count, sum_views) or group keys (group.user_id) to order the groups by, "
            "'-' first for descending; then the group keys, ascending.")},
    }


AGGREGATE_ANSWER = ('{"data": [{"group": {"<key>": <value>, ...}, "count": <n>, "sum_<field>": <n>, ...}], '
                    '"meta": {"groups": <n>}}')
