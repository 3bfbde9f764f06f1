"""`GET <r>/aggregate` in the OpenAPI document, for a repository that declares group keys or metrics:
its parameters (`service.core.describing.aggregates`, the index's filters and search) and its answer."""
from typing import Any

from service.config import Settings
from service.core.declarations.registry import Resource
from service.core.reading.grouping import METRIC_OPERATIONS, aggregatable, declares_aggregations, group_keys
from service.openapi import parameters, resources
from service.openapi.components import error_responses, json_content, schema_ref

Schema = dict[str, Any]
NUMBER = {"type": ["number", "null"]}


def offers(resource: Resource) -> bool:
    return declares_aggregations(resources.fields_for(resource, "declaration"))


def schemas(resource: Resource) -> dict[str, Schema]:
    """`<r>.Aggregation`: `{"data": [{"group": {...}, "count": n, "<op>_<field>": ...}], "meta": {"groups": n}}`."""
    fields = resources.fields_for(resource, "aggregate")
    keys: dict[str, Schema] = {}
    for name, description in group_keys(fields).items():
        dated = description.type == "date"
        keys[name] = {"type": ["string" if dated else description.json_type, "null"]}
        if dated:
            keys[name]["description"] = "By the unit asked: 2024, 2024-05, 2024-05-31; a week by its Monday."
    metrics: dict[str, Schema] = {"count": {"type": "integer"}}
    for name in aggregatable(fields):
        metrics.update({f"{operation}_{name}": NUMBER for operation in METRIC_OPERATIONS})
    group = {"type": "object", "required": ["group"], "additionalProperties": False,
             "properties": {"group": {"type": "object", "additionalProperties": False, "properties": keys,
                                      "description": "The values the group's records share, by key asked."},
                            **metrics},
             "description": "One group: its keys and the metrics asked for (only those)."}
    return {resources.name(resource.name, "Aggregation"): {
        "type": "object", "required": ["data", "meta"], "additionalProperties": False,
        "properties": {"data": {"type": "array", "items": group},
                       "meta": {"type": "object", "required": ["groups"], "additionalProperties": False,
                                "properties": {"groups": {"type": "integer"}}}}}}


def paths(resource: Resource, settings: Settings, security: list[Schema]) -> dict[str, Schema]:
    n = resource.name
    prefix = str(settings.get("server", "prefix")).rstrip("/")
    answer = {"200": {"description": f"The groups of the {n} records the index would list.",
                      "content": json_content(schema_ref(resources.name(n, "Aggregation")))}}
    return {f"{prefix}/{n}/aggregate": {"get": {
        "operationId": f"{n}.aggregate", "tags": [n], "summary": f"Count and sum {n} records by group",
        "parameters": parameters.aggregate_parameters(resource, resources.fields_for(resource, "aggregate"),
                                                      settings),
        "security": security, "responses": {**answer, **error_responses(400, 403, 429)}}}}
