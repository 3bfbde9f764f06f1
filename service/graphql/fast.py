"""An executor that completes plain scalar fields of dict sources without graphql-core's general path.

A page of 15 records with 8 fields is 120 scalar fields; for each, graphql-core builds a resolve info,
reads the arguments, calls the default resolver, checks twice for awaitables and completes the value
through the type tree: most of a list query's time. Our resolvers return dicts of plain JSON values,
so such a field is `coerce_output_value(source[name])`. Anything else — a field with its own resolver
or arguments, a non-scalar type, null, a value the scalar refuses — takes graphql-core's own path,
which also produces its exact errors: the answers are the same, only the happy path is shorter.

An object whose selected fields are all plain is completed in one loop, with what each field needs
worked out once per selection and request rather than once per field and record: no path, no
awaitable checks; a list of such objects (a page of records) skips graphql-core's per-item steps
too. A value that loop cannot take as it is sends the object (or the whole list) down the general
path, as before.
"""
from collections.abc import Callable, Iterable
from typing import Any

from graphql import FieldNode, GraphQLEnumType, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, Undefined
from graphql.type.scalars import specified_scalar_types
from graphql.execution.executor import Executor

from service.graphql.scalars import LONG_MAX, LONG_MIN, serialize_long

_SCALARS = (GraphQLScalarType, GraphQLEnumType)
# The Python type whose values a built-in scalar writes as they are (graphql-core returns a `str` for
# String and ID and a `bool` for Boolean unchanged): those skip the coercion call. (Not Float: NaN is refused.)
_AS_THEY_ARE = {"String": str, "ID": str, "Boolean": bool}
# (response name, field name, scalar type, nullable, type written as it is) for each field of a selection
Plan = tuple[tuple[str, str, Any, bool, type | None], ...]


class _Long:
    """The plan's mark of a `Long` field: an int in 64 bits is written as its digits, without a call."""


def _plain_plan(parent_type: GraphQLObjectType, grouped_field_set: Any) -> Plan | None:
    """`plain_plan` of graphql-core's grouped field set."""
    return plain_plan(parent_type, ((response_name, details[0].node)
                                    for response_name, details in grouped_field_set.items()))


def plain_plan(parent_type: GraphQLObjectType, selected: Iterable[tuple[str, FieldNode]]) -> Plan | None:
    """How to read each selected field (response name, field node) straight from a dict, or None when one
    of them is not plain (its own resolver or arguments, a non-scalar type, `__typename`)."""
    plan = []
    for response_name, node in selected:
        name = node.name.value
        field_def = parent_type.fields.get(name)
        if field_def is None or field_def.resolve is not None or field_def.args or node.arguments:
            return None
        field_type, nullable = field_def.type, True
        if type(field_type) is GraphQLNonNull:
            field_type, nullable = field_type.of_type, False
        if not isinstance(field_type, _SCALARS):
            return None
        same = _AS_THEY_ARE.get(field_type.name) if field_type is specified_scalar_types.get(field_type.name) else \
            _Long if getattr(field_type, "coerce_output_value", None) is serialize_long else None
        plan.append((response_name, name, field_type, nullable, same))
    return tuple(plan)


_MISS = object()  # a value left to the general path


def _completed(value: Any, field_type: Any) -> Any:
    """A value that is neither written as it is nor null, completed by its scalar; _MISS for one that
    takes the general path (a callable for the default resolver, a value the scalar refuses)."""
    if callable(value):
        return _MISS
    try:
        coerced = field_type.coerce_output_value(value)
    except Exception:  # noqa: BLE001 - the general path reports it exactly
        return _MISS
    return _MISS if coerced is None or coerced is Undefined else coerced


def plain_object(source: dict[str, Any], plan: Plan) -> dict[str, Any] | None:
    """The completed object, or None when a value needs graphql-core's general path (an error to
    report exactly, a callable for the default resolver to call)."""
    results: dict[str, Any] = {}
    get = source.get
    for response_name, name, field_type, nullable, same in plan:
        value = get(name)
        if type(value) is same:
            results[response_name] = value
            continue
        if value is None:
            if not nullable:
                return None
            results[response_name] = None
            continue
        if same is _Long and type(value) is int and LONG_MIN <= value <= LONG_MAX:
            results[response_name] = str(value)
            continue
        coerced = _completed(value, field_type)
        if coerced is _MISS:
            return None
        results[response_name] = coerced
    return results


def compiled_writer(plan: Plan) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """`plain_object` of one plan, as a function of the record alone: one statement per field and one
    dict display, with no loop over the plan. Worth it where a plan serves many requests (a direct
    list's, kept with the parsed document); the names and types are the function's constants."""
    constants: dict[str, Any] = {"_MISS": _MISS, "_completed": _completed, "LONG_MIN": LONG_MIN,
                                 "LONG_MAX": LONG_MAX}
    lines = ["def write(source):", "    get = source.get"]
    for position, (response_name, name, field_type, nullable, same) in enumerate(plan):
        constants[f"N{position}"], constants[f"T{position}"] = name, field_type
        constants[f"K{position}"], constants[f"S{position}"] = response_name, same
        value = f"v{position}"
        lines.append(f"    {value} = get(N{position})")
        branch = "if"
        if same is not None and same is not _Long:
            lines.append(f"    if type({value}) is S{position}: pass")
            branch = "elif"
        lines.append(f"    {branch} {value} is None:" + ("" if nullable else " return None"))
        if nullable:
            lines.append("        pass")
        if same is _Long:
            lines.append(f"    elif type({value}) is int and LONG_MIN <= {value} <= LONG_MAX: {value} = str({value})")
        lines.append("    else:")
        lines.append(f"        {value} = _completed({value}, T{position})")
        lines.append(f"        if {value} is _MISS: return None")
    lines.append("    return {" + ", ".join(f"K{i}: v{i}" for i in range(len(plan))) + "}")
    exec("\n".join(lines), constants)  # noqa: S102 - the text is ours; every name and type is a constant
    return constants["write"]


class PlainFieldExecutor(Executor):
    def complete_list_value(self, return_type: Any, field_details_list: Any, info: Any, path: Any, result: Any,
                            position_context: Any) -> Any:
        """A list of plain records (a page) completed record by record in one loop each."""
        item_type = return_type.of_type
        object_type = item_type.of_type if type(item_type) is GraphQLNonNull else item_type
        if type(result) is list and type(object_type) is GraphQLObjectType and object_type.is_type_of is None \
                and self.middleware_manager is None and not any(d.node.directives for d in field_details_list):
            grouped_field_set, defer_usages, _ = self.collect_subfields(object_type, field_details_list)
            plan = None if defer_usages else self._plan(object_type, grouped_field_set)
            if plan is not None:
                completed = []
                for item in result:
                    row = plain_object(item, plan) if type(item) is dict else None
                    if row is None:
                        break
                    completed.append(row)
                else:
                    return completed
        return super().complete_list_value(return_type, field_details_list, info, path, result, position_context)

    def execute_fields(self, parent_type: GraphQLObjectType, source_value: Any, path: Any, grouped_field_set: Any,
                       position_context: Any) -> Any:
        if type(source_value) is dict and self.middleware_manager is None:
            plan = self._plan(parent_type, grouped_field_set)
            completed = plain_object(source_value, plan) if plan is not None else None
            if completed is not None:
                return completed
        return super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)

    def _plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> Plan | None:
        # One executor runs one request: the field sets of a selection are the same objects for every
        # record of a list (graphql-core memoizes them), kept alive here so their ids stay theirs.
        plans = self.__dict__.setdefault("_plain_plans", {})
        key = (parent_type.name, id(grouped_field_set))
        if key not in plans:
            plans[key] = (grouped_field_set, _plain_plan(parent_type, grouped_field_set))
        return plans[key][1]

    def execute_field(self, parent_type: GraphQLObjectType, source: Any, field_details_list: Any, path: Any,
                      position_context: Any) -> Any:
        if type(source) is dict and self.middleware_manager is None:
            node = field_details_list[0].node
            name = node.name.value
            field_def = parent_type.fields.get(name)
            if field_def is not None and field_def.resolve is None and not field_def.args and not node.arguments:
                value = source.get(name)
                field_type = field_def.type
                if type(field_type) is GraphQLNonNull:
                    field_type = field_type.of_type
                elif value is None:
                    return None
                if value is not None and isinstance(field_type, _SCALARS) and not callable(value):
                    try:
                        coerced = field_type.coerce_output_value(value)
                    except Exception:  # noqa: BLE001 - the general path below reports it exactly
                        coerced = None
                    if coerced is not None and coerced is not Undefined:
                        return coerced
        return super().execute_field(parent_type, source, field_details_list, path, position_context)
