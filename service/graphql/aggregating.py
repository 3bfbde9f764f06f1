"""`<type>Aggregate(group, metrics, sort, search, filter)` for a repository that declares group keys or
metrics (`.groupable()`, `.aggregatable()`): REST's `<r>/aggregate`, through the same operation
(service/core/operations/aggregating.py), with the same texts for `group`, `metrics` and `sort`.

    postAggregate(group: "user_id,created_at:month", metrics: "count,sum:views") {
      data { group { user_id created_at } count sum_views }  meta { groups }
    }

`<Type>Group` has `group: <Type>GroupKey` (one member per group key: the field's scalar; a date's
unit is a text such as "2024-05") and, beside `count`, `sum_<f>`, `avg_<f>`, `min_<f>` and `max_<f>`
for each aggregatable field (Float: a sum of integers may pass Int's range).
"""
from collections.abc import Callable
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLField, GraphQLFloat, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull,
    GraphQLObjectType, GraphQLScalarType, GraphQLString,
)

from service.core.declarations.description import describe
from service.core.declarations.fields import TIMESTAMPS, Field
from service.core.reading.grouping import METRIC_OPERATIONS, aggregatable, declares_aggregations

AGGREGATE_META = GraphQLObjectType("AggregateMeta", {"groups": GraphQLField(GraphQLNonNull(GraphQLInt))},
                                   description="How many groups the aggregation answers.")


def aggregate_field(type_name: str, fields: list[Field], scalar: Callable[[Field], GraphQLScalarType],
                    record_filter: GraphQLInputObjectType | None) -> GraphQLField | None:
    """`<type>Aggregate`, or None when the repository declares neither group keys nor metrics."""
    if not declares_aggregations(fields):
        return None
    keys = {f.name: GraphQLField(GraphQLString if describe(f).type == "date" else scalar(f))
            for f in fields if f.is_groupable}
    keys.update({stamp: GraphQLField(GraphQLString) for stamp in TIMESTAMPS})
    group_key = GraphQLObjectType(f"{type_name}GroupKey", keys, description=(
        f"The values a group of {type_name} records shares: those asked for in `group` (a date's are texts "
        "by its unit: 2024, 2024-05, 2024-05-31; a week's is its Monday)."))
    metrics: dict[str, GraphQLField] = {"group": GraphQLField(GraphQLNonNull(group_key)),
                                        "count": GraphQLField(GraphQLInt)}
    for name in aggregatable(fields):
        metrics.update({f"{operation}_{name}": GraphQLField(GraphQLFloat) for operation in METRIC_OPERATIONS})
    group = GraphQLObjectType(f"{type_name}Group", metrics, description=(
        "One group: its key values and the metrics asked for in `metrics` (the others are null)."))
    answer = GraphQLObjectType(f"{type_name}Aggregation", {
        "data": GraphQLField(GraphQLNonNull(GraphQLList(GraphQLNonNull(group)))),
        "meta": GraphQLField(GraphQLNonNull(AGGREGATE_META)),
    }, description=(
        f"{type_name} records counted and summed by group, among those the list gives with the same search and "
        "filter. group: comma-separated keys, a date with its unit (created_at:month; day, week, month or year); "
        "metrics: count, sum:<field>, avg:<field>, min:<field>, max:<field> (default count); sort: metrics "
        "(-count, sum_views) or keys (group.user_id), - for descending."))
    arguments = {name: GraphQLArgument(GraphQLString) for name in ("group", "metrics", "search", "sort")}
    if record_filter is not None:
        arguments["filter"] = GraphQLArgument(record_filter)
    return GraphQLField(GraphQLNonNull(answer), arguments)


def bind(query: Any, name: str, resolvers: Any, setter: Any) -> None:
    setter(query, f"{name}Aggregate", lambda _, info, r=resolvers, **kw: r.aggregate(info, **kw))
