"""Lists of plain fields, and a record with its plain relation lists, answered without graphql-core's executor.

`{ postList(first: 15) { id title views } }` — one root list field of a repository, selecting only
fields that are written as stored (no relation, no argument, no fragment, no directive) — is planned
once per document: the repository's resolvers, the fields it selects and how each one is written
(`fast.plain_plan`). So is `query($id: ID!) { post(id: $id) { id title comments { id body } } }` — one
root show field selecting such fields and relation fields without arguments, each selecting such fields
of its records. A request then coerces its variables and the field's arguments with graphql-core's own
functions, runs the operation the resolver runs, and writes the answer in one pass. What graphql-core
would add for such a document is bookkeeping: the answer is the same.

Anything else takes graphql-core's path: other documents, an operation named otherwise, variables or
arguments it refuses (it words the errors), resolvers whose class overrides a method on the way, and a
record the plan cannot write as it is (a null in a non-null field, a value the scalar refuses) — then
the field is read again through graphql-core, which reports it exactly.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode, ExecutionResult, FieldNode, GraphQLError, GraphQLField, GraphQLList, GraphQLNonNull,
    GraphQLObjectType, GraphQLSchema, OperationDefinitionNode, OperationType, located_error,
)
from graphql.execution.values import get_argument_values, get_variable_values

from service.core.declarations.budget import Budget
from service.core.declarations.context import Context
from service.core.declarations.registry import ResourceRelation
from service.graphql.fast import compiled_writer, plain_plan
from service.graphql.resolvers import RELATIONSHIPS, RepositoryResolvers, flatten, relation_items
from service.graphql.selection import ALWAYS, selected_in

# How a direct field's answer is written from what its operation gives, within the request's budget:
# None where graphql-core must write it.
Writer = Callable[[Any, Budget], Any]


@dataclass(frozen=True)
class Direct:
    key: str                      # the field's response name
    node: FieldNode
    field: GraphQLField
    operation: OperationDefinitionNode
    resolvers: RepositoryResolvers
    related: str                  # the `related` paths it loads (a show's relation fields)
    selected: dict[str, frozenset[str]]  # as `RepositoryResolvers._plan` gives it: the repository's fields
    write: Writer
    many: bool                    # a list field (else a show)
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


_ON_THE_WAY = ("list", "listed", "show", "shown", "context", "_plan", "_relatable", "relatable")


def answers_directly(resolvers: RepositoryResolvers) -> bool:
    """Whether a repository's lists and shows may skip the executor: its resolvers read as the framework's do."""
    kind = type(resolvers)
    return all(getattr(kind, name) is getattr(RepositoryResolvers, name) for name in _ON_THE_WAY)


def plan_direct(schema: GraphQLSchema, document: DocumentNode, lists: dict[str, RepositoryResolvers],
                shows: dict[str, RepositoryResolvers]) -> Direct | None:
    """The plan of a document that is one query of one plain list field or one show field (`lists`,
    `shows`: such fields by name, with their resolvers), else None."""
    if len(document.definitions) != 1 or not isinstance(document.definitions[0], OperationDefinitionNode):
        return None
    operation = document.definitions[0]
    selections = operation.selection_set.selections
    if operation.operation != OperationType.QUERY or operation.directives or len(selections) != 1:
        return None
    node = selections[0]
    if not isinstance(node, FieldNode) or node.directives or node.selection_set is None:
        return None
    name, query = node.name.value, schema.query_type
    field = query.fields.get(name) if query is not None else None
    resolvers = lists.get(name) or shows.get(name)
    if field is None or resolvers is None:
        return None
    resource = resolvers._resource()
    many = name in lists
    record_type = _item_type(field.type) if many else field.type
    chosen = _chosen(node)
    if not isinstance(record_type, GraphQLObjectType) or chosen is None:
        return None
    if many:
        plan = plain_plan(record_type, chosen.items())
        write = _rows(compiled_writer(plan)) if plan is not None else None
        related = ""
    else:
        relations = {key: resource.relations.get(selected.name.value) for key, selected in chosen.items()}
        write = _record_writer(record_type, chosen, relations)
        related = ",".join(sorted({relation.name for relation in relations.values() if relation is not None}))
    if write is None:
        return None
    return Direct((node.alias or node.name).value, node, field, operation, resolvers, related,
                  selected_in(resource, [node], {}, 1), write, many, _literal_arguments(field, node, operation))


def _chosen(node: FieldNode) -> dict[str, FieldNode] | None:
    """The fields a selection chooses, by response name; None where it has a fragment, a directive or a
    response name twice (graphql-core merges those: not worth planning)."""
    chosen: dict[str, FieldNode] = {}
    for selection in node.selection_set.selections if node.selection_set else ():
        if not isinstance(selection, FieldNode) or selection.directives:
            return None
        key = (selection.alias or selection.name).value
        if key in chosen:
            return None
        chosen[key] = selection
    return chosen


def _item_type(field_type: Any) -> GraphQLObjectType | None:
    """The record type of a `[T!]!` type."""
    if not isinstance(field_type, GraphQLNonNull) or not isinstance(field_type.of_type, GraphQLList):
        return None
    inner = field_type.of_type.of_type
    if not isinstance(inner, GraphQLNonNull) or not isinstance(inner.of_type, GraphQLObjectType):
        return None
    return inner.of_type


def _rows(write: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Writer:
    def rows(records: list[dict[str, Any]], budget: Budget) -> list[dict[str, Any]] | None:
        written = []
        for record in records:
            row = write(record)
            if row is None:
                return None
            written.append(row)
        return written
    return rows


@dataclass(frozen=True)
class _RelationField:
    key: str
    name: str
    single: bool
    first: int | None             # the field's `first` (its default: the field takes no arguments here)
    keep: frozenset[str]          # the fields it selects of its records, as the budget counts them
    write: Callable[[dict[str, Any]], dict[str, Any] | None]


def _relation_field(owner: GraphQLObjectType, key: str, node: FieldNode,
                    relation: ResourceRelation) -> _RelationField | None:
    """How a relation field of plain fields without arguments is written, else None."""
    field = owner.fields.get(relation.name)
    chosen = _chosen(node)
    if field is None or node.arguments or node.selection_set is None or chosen is None:
        return None
    single = relation.kind == "belongs_to"
    target = field.type if single else _item_type(field.type)
    if not isinstance(target, GraphQLObjectType) or target.name != relation.target.model.__name__:
        return None
    plan = plain_plan(target, chosen.items())
    if plan is None:
        return None
    argument = field.args.get("first")
    default = argument.default_value if argument is not None else None
    first = default if type(default) is int else None
    keep = frozenset(selected.name.value for selected in chosen.values() if selected.name.value not in ALWAYS)
    return _RelationField(key, relation.name, single, first, keep, compiled_writer(plan))


def _record_writer(record_type: GraphQLObjectType, chosen: dict[str, FieldNode],
                   relations: dict[str, ResourceRelation | None]) -> Writer | None:
    """The writer of a shown record: its plain fields, then its relation fields, in the selection's order."""
    plan = plain_plan(record_type, [(key, node) for key, node in chosen.items() if relations[key] is None])
    fields = [_relation_field(record_type, key, chosen[key], relation)
              for key, relation in relations.items() if relation is not None]
    if plan is None or any(field is None for field in fields):
        return None
    write_own, related = compiled_writer(plan), [field for field in fields if field is not None]
    order = tuple(chosen)
    in_order = order == tuple(entry[0] for entry in plan) + tuple(field.key for field in related)

    def write(record: dict[str, Any], budget: Budget) -> dict[str, Any] | None:
        row = write_own(record)
        if row is None:
            return None
        loaded = record[RELATIONSHIPS]
        for field in related:
            items = relation_items(loaded, field.name, field.single, field.first)
            written = []
            for item in items:
                budget.place(item, field.keep)  # as the relation field's resolver charges what it writes
                value = field.write(flatten(item))
                if value is None:
                    return None
                written.append(value)
            row[field.key] = (written[0] if written else None) if field.single else written
        return row if in_order else {key: row[key] for key in order}
    return write


async def run_direct(schema: GraphQLSchema, direct: Direct, variables: dict[str, Any] | None,
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
    resolvers = direct.resolvers
    found: Any  # a list's records, or the record shown
    try:
        if direct.many:
            found = await resolvers.listed(context, "", direct.selected, **arguments, flat=True)
        else:
            found = await resolvers.shown(context, direct.related, direct.selected, resolvers.relatable(), **arguments)
    except Exception as error:  # noqa: BLE001 - reported as graphql-core reports a resolver's error
        # A non-null root field that fails leaves no data.
        data = None if isinstance(direct.field.type, GraphQLNonNull) else {direct.key: None}
        return ExecutionResult(data, [located_error(error, [direct.node], [direct.key])])
    assert context.budget is not None  # the endpoint gives every request one
    written = direct.write(found, context.budget)
    return None if written is None else ExecutionResult({direct.key: written}, None)
