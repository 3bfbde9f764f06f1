"""Lists of plain fields answered without graphql-core's executor.

`{ postList(first: 15) { id title views } }` — one root list field of a repository, selecting only
fields that are written as stored (no relation, no argument, no fragment, no directive) — is planned
once per document: the repository's resolvers, the fields it selects and how each one is written
(`fast.plain_plan`). A request then coerces its variables and the field's arguments with graphql-core's
own functions, runs the operation the `list` resolver runs, and writes each record in one loop.
What graphql-core would add for such a document is bookkeeping: the answer is the same.

Anything else takes graphql-core's path: other documents, an operation named otherwise, variables or
arguments it refuses (it words the errors), resolvers whose class overrides `list` or `context`, and a
record the plan cannot write as it is (a null in a non-null field, a value the scalar refuses) — then
the list is read again through graphql-core, which reports it exactly.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode, ExecutionResult, FieldNode, GraphQLError, GraphQLField, GraphQLList, GraphQLNonNull,
    GraphQLObjectType, GraphQLSchema, OperationDefinitionNode, OperationType, located_error,
)
from graphql.execution.values import get_argument_values, get_variable_values

from service.core.declarations.context import Context
from service.graphql.fast import Plan, compiled_writer, plain_plan
from service.graphql.resolvers import RepositoryResolvers
from service.graphql.selection import selected_in


@dataclass(frozen=True)
class DirectList:
    key: str                      # the field's response name
    node: FieldNode
    field: GraphQLField
    operation: OperationDefinitionNode
    resolvers: RepositoryResolvers
    selected: dict[str, frozenset[str]]  # as `RepositoryResolvers._plan` gives it: the repository's fields
    plan: Plan
    write: Callable[[dict[str, Any]], dict[str, Any] | None]  # `plain_object` of the plan, compiled
    literal: dict[str, Any] | None = None  # the field's arguments, where the document alone gives them


# The argument values that may be kept with a plan and given to every request (nothing a resolver could change).
_CONSTANT = (str, int, float, bool, type(None))


def _literal_arguments(field: GraphQLField, node: FieldNode, operation: OperationDefinitionNode) -> dict | None:
    """The field's arguments when they depend on the document alone (no variables) and are plain values;
    else None: each request coerces them (and an error is worded by graphql-core's path)."""
    if operation.variable_definitions:
        return None
    try:
        arguments = get_argument_values(field, node, None)
    except GraphQLError:
        return None
    return arguments if all(type(value) in _CONSTANT for value in arguments.values()) else None


def answers_directly(resolvers: RepositoryResolvers) -> bool:
    """Whether a repository's lists may skip the executor: its resolvers list as the framework does."""
    kind = type(resolvers)
    return kind.list is RepositoryResolvers.list and kind.context is RepositoryResolvers.context \
        and kind._plan is RepositoryResolvers._plan and kind.listed is RepositoryResolvers.listed


def plan_direct(schema: GraphQLSchema, document: DocumentNode,
                lists: dict[str, RepositoryResolvers]) -> DirectList | None:
    """The plan of a document that is one query of one plain list field (`lists`: such fields by name,
    with their resolvers), else None."""
    if len(document.definitions) != 1 or not isinstance(document.definitions[0], OperationDefinitionNode):
        return None
    operation = document.definitions[0]
    selections = operation.selection_set.selections
    if operation.operation != OperationType.QUERY or operation.directives or len(selections) != 1:
        return None
    node = selections[0]
    if not isinstance(node, FieldNode) or node.directives or node.selection_set is None:
        return None
    resolvers = lists.get(node.name.value)
    query = schema.query_type
    field = query.fields.get(node.name.value) if query is not None else None
    if resolvers is None or field is None:
        return None
    item = _item_type(field)
    if item is None:
        return None
    chosen: dict[str, FieldNode] = {}
    for selection in node.selection_set.selections:
        if not isinstance(selection, FieldNode) or selection.directives or selection.selection_set is not None:
            return None
        key = (selection.alias or selection.name).value
        if key in chosen:  # graphql-core merges the two: not worth planning
            return None
        chosen[key] = selection
    plan = plain_plan(item, chosen.items())
    if plan is None:
        return None
    return DirectList((node.alias or node.name).value, node, field, operation, resolvers,
                      selected_in(resolvers._resource(), [node], {}, 0), plan, compiled_writer(plan),
                      _literal_arguments(field, node, operation))


def _item_type(field: GraphQLField) -> GraphQLObjectType | None:
    """The record type of a `[T!]!` field."""
    outer = field.type
    if not isinstance(outer, GraphQLNonNull) or not isinstance(outer.of_type, GraphQLList):
        return None
    inner = outer.of_type.of_type
    if not isinstance(inner, GraphQLNonNull) or not isinstance(inner.of_type, GraphQLObjectType):
        return None
    return inner.of_type


async def run_direct(schema: GraphQLSchema, direct: DirectList, variables: dict[str, Any] | None,
                     operation_name: str | None, context: Context) -> ExecutionResult | None:
    """The answer, or None when graphql-core must give it."""
    named = direct.operation.name.value if direct.operation.name else None
    if operation_name is not None and operation_name != named:
        return None
    if direct.literal is not None:
        arguments = direct.literal
    else:
        coerced = get_variable_values(schema, direct.operation.variable_definitions or (), variables or {})
        if isinstance(coerced, list):
            return None
        try:
            arguments = get_argument_values(direct.field, direct.node, coerced)
        except GraphQLError:
            return None
    try:
        records = await direct.resolvers.listed(context, "", direct.selected, **arguments, flat=True)
    except Exception as error:  # noqa: BLE001 - reported as graphql-core reports a resolver's error
        # A non-null root field that fails leaves no data.
        return ExecutionResult(None, [located_error(error, [direct.node], [direct.key])])
    rows = []
    for record in records:
        row = direct.write(record)
        if row is None:
            return None
        rows.append(row)
    return ExecutionResult({direct.key: rows}, None)
