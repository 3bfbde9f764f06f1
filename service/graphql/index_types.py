"""The GraphQL types of the index query: typed filter inputs, `Count`, `<Type>Page` and
`PageMeta`, and the arguments `<type>List` and `<type>Page` take.

`<Type>Filter` has one member per matchable field, typed by an operator input named after the field's
scalar: `IntFilter { eq ne gt gte lt lte in nin between isNull }`, `LongFilter`, `FloatFilter`,
`StringFilter { eq ne in nin isNull }`, `BooleanFilter { eq ne isNull }`, `IDFilter`; a date field
(its values are ISO texts) gets `DateFilter`, with every operator on its scalar. The operators are
those of the field's one description, from the operator table (`service.core.kernel.operators`): their
arity gives each member's type (a flag is a Boolean, a list or pair a list of the scalar). `any`, `all`
(lists of `<Type>Filter`) and `not` (one) join filters, as the filter object reads them. A BelongsTo
declared `.filterable(...)` adds a member named after the relation, `<Type><Relation>Filter` (one
operator input per filterable field of the parent); a repository with to-many relations adds `has` and
`hasNot`, lists of their names.
"""
from collections.abc import Callable

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLEnumType, GraphQLField, GraphQLInputField, GraphQLInputObjectType,
    GraphQLInt, GraphQLList, GraphQLNamedType, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLString,
)

from service.core.declarations import Resource
from service.core.declarations.description import describe
from service.core.declarations.fields import Field
from service.core.kernel.operators import FLAG, for_type
from service.core.reading.relation_filters import HAS, HAS_NOT, existing_relations, filterable_relations, target_fields

# The value type whose operators each scalar's operator input is named after: `<Scalar>Filter`;
# other operators on that scalar (a date's on String) get a longer name.
_NATURAL = {"String": "string", "ID": "string", "Boolean": "boolean", "Int": "integer", "Long": "integer",
            "Float": "number"}

COUNT = GraphQLEnumType("Count", {"EXACT": "EXACT", "NONE": "NONE"}, description=(
    "EXACT counts the matching records (meta.total, meta.lastPage); NONE leaves them null, for lists "
    "where a count costs too much."))
PAGE_META = GraphQLObjectType("PageMeta", {
    "total": GraphQLField(GraphQLInt),         # null with count: NONE
    "currentPage": GraphQLField(GraphQLInt),   # null in cursor mode (after/before)
    "lastPage": GraphQLField(GraphQLInt),      # null with count: NONE and in cursor mode
    "perPage": GraphQLField(GraphQLNonNull(GraphQLInt)),
    "nextCursor": GraphQLField(GraphQLString),
    "prevCursor": GraphQLField(GraphQLString),
}, description="Where a page is: the REST index's meta. Pass nextCursor to `after` for the next page and "
               "prevCursor to `before` for the previous one; both are null at the ends.")


def _operators_name(scalar: str, value_type: str) -> str:
    if scalar in _NATURAL and for_type(_NATURAL[scalar]) == for_type(value_type):
        return f"{scalar}Filter"
    if value_type == "date":
        return "DateFilter" if scalar == "String" else f"{scalar}DateFilter"
    return f"{scalar}{value_type.capitalize()}Filter"


class IndexTypes:
    """Builds each shared type once per schema (a schema holds one type per name)."""

    def __init__(self, scalar: Callable[[Field], GraphQLScalarType], first: int) -> None:
        self._scalar = scalar
        self._first = first
        self._operators: dict[str, GraphQLInputObjectType] = {}

    def record_filter(self, type_name: str, fields: list[Field], resource: Resource | None = None,
                      shown: frozenset[str] = frozenset()) -> GraphQLInputObjectType | None:
        """`<Type>Filter`, or None when no field is matchable and `resource` (whose relations to the
        repositories `shown` in the schema it filters through) has no relation to filter through."""
        members = {f.name: GraphQLInputField(self._operator_input(f)) for f in fields if f.is_matchable}
        through = self._through(type_name, resource, shown)
        members.update({key: value for key, value in through.items() if key not in members})
        if not members:
            return None
        name = f"{type_name}Filter"

        def joined() -> dict[str, GraphQLInputField]:  # a thunk: the members name the type itself
            own = GraphQLList(GraphQLNonNull(record_filter))
            compounds = {"all": GraphQLInputField(own), "any": GraphQLInputField(own),
                         "not": GraphQLInputField(record_filter)}
            return {**members, **{key: value for key, value in compounds.items() if key not in members}}
        record_filter = GraphQLInputObjectType(name, joined, description=(
            f"Filters on {type_name} records, combined with AND: one operator object per field; all (every "
            "one of a list of filters holds), any (one of them does) and not (a filter does not) join filters, at most "
            "3 deep and with 50 operators in all."))
        return record_filter

    def _through(self, type_name: str, resource: Resource | None,
                 shown: frozenset[str]) -> dict[str, GraphQLInputField]:
        """The members that filter through `resource`'s relations to `shown` repositories: one per
        filterable BelongsTo, `has` and `hasNot`."""
        if resource is None:
            return {}
        members = {}
        for name, relation in filterable_relations(resource).items():
            if relation.target.name not in shown:
                continue
            parent = {f.name: GraphQLInputField(self._operator_input(f)) for f in target_fields(relation)}
            members[name] = GraphQLInputField(GraphQLInputObjectType(
                f"{type_name}{name[:1].upper()}{name[1:]}Filter", parent, description=(
                    f"Only records whose {name}, as the user may see it, matches: one operator object per field.")))
        to_many = [name for name in existing_relations(resource) if resource.relations[name].target.name in shown]
        if to_many:
            names = ", ".join(to_many)
            members[HAS] = GraphQLInputField(GraphQLList(GraphQLNonNull(GraphQLString)), description=(
                f"Only records with at least one related record the user may see in each of these ({names})."))
            members[HAS_NOT] = GraphQLInputField(GraphQLList(GraphQLNonNull(GraphQLString)), description=(
                f"Only records with no related record the user may see in each of these ({names})."))
        return members

    def _operator_input(self, field: Field) -> GraphQLInputObjectType:
        description = describe(field)
        scalar = self._scalar(field)
        name = _operators_name(scalar.name, description.type)
        if name not in self._operators:
            operators = for_type(description.type)
            members = {}
            for op in operators:
                if op.arity is FLAG:
                    members[op.object_name] = GraphQLInputField(GraphQLBoolean)
                elif op.arity.size == 1:
                    members[op.object_name] = GraphQLInputField(scalar)
                else:
                    members[op.object_name] = GraphQLInputField(GraphQLList(GraphQLNonNull(scalar)))
            ranges = "".join(f" {op.object_name} takes [low, high], both included;" for op in operators
                             if op.arity.size == 2)
            whole_days = [op.object_name for op in operators if op.whole_day]
            days = f" a date-only bound ({', '.join(whole_days)}) stands for that whole day;" \
                if description.type == "date" and whole_days else ""
            names = ", ".join(op.object_name for op in operators)
            self._operators[name] = GraphQLInputObjectType(name, members, description=(
                f"Operators on a {scalar.name} field, combined with AND ({names}): eq null means "
                f"no value, ne null any value;{ranges}{days} isNull true finds records without one."))
        return self._operators[name]

    def list_arguments(self, record_filter: GraphQLInputObjectType | None,
                       first: int | None = None) -> dict[str, GraphQLArgument]:
        """`<type>List`'s: `first` (default: `first`, the repository's page size, else the schema's) and
        `page`, then what narrows and orders the list."""
        arguments = {"first": GraphQLArgument(GraphQLInt, default_value=first or self._first),
                     "page": GraphQLArgument(GraphQLInt, default_value=1),
                     "search": GraphQLArgument(GraphQLString),
                     "sort": GraphQLArgument(GraphQLString)}
        if record_filter is not None:
            arguments["filter"] = GraphQLArgument(record_filter)
        return arguments

    def page_field(self, type_name: str, item: GraphQLNamedType,
                   record_filter: GraphQLInputObjectType | None, first: int | None = None) -> GraphQLField:
        """`<type>Page(...)`: a list's arguments, cursors and counting; `{ data, meta }`."""
        page = GraphQLObjectType(f"{type_name}Page", {
            "data": GraphQLField(GraphQLNonNull(GraphQLList(GraphQLNonNull(item)))),
            "meta": GraphQLField(GraphQLNonNull(PAGE_META)),
        })
        arguments = {**self.list_arguments(record_filter, first),
                     "after": GraphQLArgument(GraphQLString), "before": GraphQLArgument(GraphQLString),
                     "count": GraphQLArgument(COUNT, default_value="EXACT")}
        return GraphQLField(GraphQLNonNull(page), arguments)
