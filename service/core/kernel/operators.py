"""The filter operators, one entry each: every door, both evaluators and the documents read them here.

An operator has a name in the query language (`views[gte]=10`, a policy scope's `{"views": {"gte": 10}}`)
and in a filter object (GraphQL's `<Type>Filter`, the MCP index tool's `filter`: `isNull` for `null`); an
arity (what its value is: one value, a list, two values, or a flag); the value types of the fields that
allow it; the conditions it becomes, one per value (`between` is `gte` then `lte`; `eq` is an exact
match, `<field>=v`); and the words the documents say for it, in a query string and in a filter object.

A condition is what storage compiles to a query (`storage/filters.py` holds the one MongoDB mapping of
these names, which a test holds to CONDITIONS) and what the matcher (`service.core.kernel.matching`) tests in
the process, with the test given here. An operator made of existing conditions is one entry in
OPERATORS; one that needs a new condition adds it to CONDITIONS and to storage's translation too.
"""
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

from service.core.kernel.errors import BadRequest

ORDERED = frozenset({"integer", "number", "date"})
EVERY = ORDERED | {"boolean", "string"}
EXACT = "eq"  # the condition of an exact match: a door puts it with `<field>=v`
NAME = "[A-Za-z]+"  # the shape of an operator's names: `<field>[<name>]` reads only this (a regex)
DAY_NOTE = " A date-only upper bound includes that whole day."


@dataclass(frozen=True)
class Condition:
    """One comparison of a stored value with a given one, in storage's vocabulary."""
    name: str
    test: Callable[[Any, Any], bool]  # the stored value, the given one: as the database answers
    ordered: bool = False        # compares values of one kind only (numbers with numbers, ...), never null
    takes_null: bool = False     # null is a value to compare with (ne null: any value)
    next_day: str | None = None  # a date-only value means its whole day: this condition on the next day
    many: bool = False           # the given value is a list of values


CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition("eq", operator.eq, takes_null=True),
    Condition("ne", operator.ne, takes_null=True),
    Condition("gt", operator.gt, ordered=True, next_day="gte"),
    Condition("gte", operator.ge, ordered=True),
    Condition("lt", operator.lt, ordered=True),
    Condition("lte", operator.le, ordered=True, next_day="lt"),
    Condition("in", lambda stored, values: stored in values, many=True),
    Condition("nin", lambda stored, values: stored not in values, many=True),
    Condition("null", lambda stored, flag: (stored is None) == bool(flag)),
)}


@dataclass(frozen=True)
class Arity:
    """What an operator's value is, and how a refusal names the shape it lacks."""
    name: str
    size: int | None = 1  # how many values (None: any number of them)
    query_shape: str = ""  # in a query string ("" : never refused for its shape)
    typed_shape: str = ""  # in JSON or GraphQL


ONE = Arity("one")
LIST = Arity("list", size=None, typed_shape="a list of values")
PAIR = Arity("pair", size=2, query_shape="two values: low,high", typed_shape="two values: [low, high]")
FLAG = Arity("flag", query_shape="true or false", typed_shape="true or false")


@dataclass(frozen=True)
class Operator:
    name: str
    arity: Arity
    types: frozenset[str]     # the value types (`Description.type`) of the fields that allow it
    becomes: tuple[str, ...]  # its conditions, one per value
    query_text: str           # a query parameter's description: {name} the field, {day} DAY_NOTE on dates
    object_text: str          # a filter object member's description ({day} too)
    object_name: str = ""  # the query name when empty

    def __post_init__(self) -> None:
        if not self.object_name:
            object.__setattr__(self, "object_name", self.name)

    @property
    def exact(self) -> bool:
        return self.becomes == (EXACT,)

    @property
    def takes_null(self) -> bool:
        """Whether null is a value it takes (eq null: no value; ne null: any value)."""
        return all(CONDITIONS[name].takes_null for name in self.becomes)

    @property
    def whole_day(self) -> bool:
        """Whether a date-only value of it stands for that whole day."""
        return any(CONDITIONS[name].next_day for name in self.becomes)


_LISTED = " (repeat the parameter for values that contain commas)."
OPERATORS: dict[str, Operator] = {op.name: op for op in (
    Operator("eq", ONE, EVERY, ("eq",), "Only records whose {name} equals this value exactly ({without}: records "
             "without one).", "Equals this value (null: records without one)."),
    Operator("ne", ONE, EVERY, ("ne",), "Only records whose {name} differs from this value (also `-{name}=v`).",
             "Differs from this value (null: records with one)."),
    Operator("gt", ONE, ORDERED, ("gt",), "Only records whose {name} is greater than this value.{day}",
             "Greater than this value.{day}"),
    Operator("gte", ONE, ORDERED, ("gte",), "Only records whose {name} is at least this value.",
             "At least this value."),
    Operator("lt", ONE, ORDERED, ("lt",), "Only records whose {name} is less than this value.",
             "Less than this value."),
    Operator("lte", ONE, ORDERED, ("lte",), "Only records whose {name} is at most this value.{day}",
             "At most this value.{day}"),
    Operator("in", LIST, EVERY - {"boolean"}, ("in",),
             "Only records whose {name} is one of these comma-separated values" + _LISTED, "One of these values."),
    Operator("nin", LIST, EVERY - {"boolean"}, ("nin",),
             "Only records whose {name} is none of these comma-separated values" + _LISTED, "None of these values."),
    Operator("between", PAIR, ORDERED, ("gte", "lte"), "Only records whose {name} is within `low,high`, both "
             "included.{day}", "Within [low, high], both included.{day}"),
    Operator("null", FLAG, EVERY, ("null",), "true: only records without a {name}; false: only those with one.",
             "true: only records without a value; false: only those with one.", object_name="isNull"),
)}
BY_OBJECT_NAME = {op.object_name: op for op in OPERATORS.values()}
NEGATED = OPERATORS["ne"]  # `-<field>=v`


def for_type(value_type: str) -> tuple[Operator, ...]:
    """The operators a field of this value type allows, in the table's order."""
    return tuple(op for op in OPERATORS.values() if value_type in op.types)


def query_text(op: Operator, name: str, value_type: str, without: str = "`null`") -> str:
    """What `<name>[op]=v` finds, for a query parameter's description; `without`: how null is written."""
    return op.query_text.format(name=name, day=_day(op, value_type), without=without)


def object_text(op: Operator, value_type: str) -> str:
    """What `{"op": v}` finds, for a filter object member's description."""
    return op.object_text.format(day=_day(op, value_type))


def _day(op: Operator, value_type: str) -> str:
    return DAY_NOTE if value_type == "date" and op.whole_day else ""


def refuse(where: str, message: str) -> NoReturn:
    """A 400 naming where the filter was sent."""
    raise BadRequest(message, {where: [message]})


def refuse_operator(where: str, given: str, field_name: str, allowed: list[str]) -> NoReturn:
    refuse(where, f"The filter operator {given!r} is not allowed on the field {field_name!r}; "
                  f"it takes {', '.join(allowed)}.")


def choices(names: Iterable[str]) -> str:
    """Names for a message that lists the valid choices: sorted, comma-separated, or "none"."""
    return ", ".join(sorted(names)) or "none"


def refuse_field(where: str, name: str, filterable: Iterable[str]) -> NoReturn:
    refuse(where, f"The field {name!r} cannot be filtered; the filterable fields are: {choices(filterable)}.")


def refuse_shape(where: str, shape: str) -> NoReturn:
    refuse(where, f"The {where} filter must be {shape}.")


def refuse_null(where: str) -> NoReturn:
    refuse(where, f"The {where} filter needs a value to compare with.")
