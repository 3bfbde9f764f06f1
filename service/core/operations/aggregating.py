"""Aggregations: `GET <r>/aggregate`, GraphQL `<type>Aggregate`, the MCP aggregate tool.

The records are those the index would list for the same user and parameters (its filters, filter
object, search, `trashed`, and the policy's scope), chosen by the same filter in the pipeline's first
`$match`, so a group's count is what a walk through the index pages would count. Groups and metrics
are read by `service.core.reading.grouping`; storage groups them in one pipeline.
"""
from typing import Any

from service.core.declarations import READ, Context, Restify
from service.core.operations.crud import enter, index_filter
from service.core.kernel import BadRequest
from service.core.reading import (AGGREGATE_PARAMETERS, aggregation_answer, declares_aggregations, index_query,
                                  parse_aggregation, taking_turns, trashed_asked, visibility_of)


async def aggregate(app: Restify, name: str, context: Context) -> dict[str, Any]:
    """`{"data": [{"group": {...}, "count": n, "sum_views": ...}], "meta": {"groups": n}}`."""
    app = app.pinned()
    context.action = "aggregate"
    resource = enter(app, name, context, READ)
    if not declares_aggregations(resource.fields(Context(action="declaration"))):
        message = f"The repository {name!r} declares no groupable or aggregatable fields."
        raise BadRequest(message, {"group": [message]})
    fields = resource.fields(context)
    plan = parse_aggregation(fields, context.params, app.settings)
    # The index's own parameters (its `sort` is not this one's), read as the index reads them.
    params = {key: value for key, value in context.params.items() if key not in AGGREGATE_PARAMETERS}
    query = index_query(resource, fields, context, app.settings, params)
    seen = visibility_of(app, resource, context.user, trashed_asked(context.params))
    await app.ready()
    # an expensive filter, search or grouping takes turns, as an expensive index does
    async with taking_turns(app, resource, fields, query, context, plan.expense):
        where = await index_filter(app, resource, fields, query, context, seen)
        rows = await app.collection(resource).group(where, plan.keys, plan.metrics, plan.most)
    return aggregation_answer(plan, rows)
