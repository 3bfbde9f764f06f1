"""A policy's read rule (`scope(user)`) in the query language, read once into what storage compiles.

A scope is True (everything), False (nothing), a dict, or `any_of(dict, dict, ...)`. A dict's values
are exact (`{"user_id": user.id}`; None: missing or null) or operator expressions in the vocabulary of
the index filters: `{"views": {"gte": 10}}`, `{"status": {"in": ["a", "b"]}}`,
`{"views": {"between": [1, 9]}}`, `{"note": {"null": True}}`. An unknown operator or a malformed value
is a DeclarationError naming the policy: the application's rule is wrong, not the request.

The same alternatives are tested in the process on documents a change stream delivers (`admits`), so
the live feeds apply exactly the rule the queries apply.
"""
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from service.core.kernel import EXACT, FLAG, LIST, OPERATORS, Condition, DeclarationError, satisfies

_SCALARS = (str, int, float, bool, type(None), datetime)
Alternatives = tuple[dict[str, Any], ...]


def compile_alternatives(policy: str, alternatives: Sequence[Mapping[str, Any]]) -> Alternatives:
    """The alternatives in storage's vocabulary (`between` becomes `gte` and `lte`, lists tuples)."""
    return tuple(_alternative(policy, alternative) for alternative in alternatives)


def _alternative(policy: str, values: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        raise DeclarationError(f"{policy}.scope(): any_of() takes dicts, not {type(values).__name__}")
    compiled: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Mapping):
            compiled[name] = _operations(policy, name, value)
        else:
            compiled[name] = _scalar(policy, name, value)
    return compiled


def _operations(policy: str, name: str, expression: Mapping[str, Any]) -> dict[str, Any]:
    """{operator: value} as {condition: value}: `between` gives `gte` and `lte`, lists become tuples."""
    operations: dict[str, Any] = {}
    for operator, value in expression.items():
        entry = OPERATORS.get(operator)
        if entry is None:
            raise DeclarationError(f"{policy}.scope(): unknown operator {operator!r} on {name!r}; "
                                   f"use one of {', '.join(OPERATORS)}")
        if entry.arity is FLAG:
            if not isinstance(value, bool):
                raise DeclarationError(f"{policy}.scope(): {name!r} {operator} takes True or False")
            operations[entry.becomes[0]] = value
        elif entry.arity is LIST:
            operations[entry.becomes[0]] = tuple(_scalar(policy, name, v) for v in _list(policy, name, operator, value))
        elif entry.arity.size == 1:
            operations[entry.becomes[0]] = _scalar(policy, name, value)
        else:
            values = _list(policy, name, operator, value)
            if len(values) != entry.arity.size:
                raise DeclarationError(f"{policy}.scope(): {name!r} {operator} takes {entry.arity.typed_shape}")
            operations.update(zip(entry.becomes, (_scalar(policy, name, v) for v in values), strict=False))
    return operations


def _list(policy: str, name: str, operator: str, value: Any) -> Sequence[Any]:
    if not isinstance(value, (list, tuple)):
        raise DeclarationError(f"{policy}.scope(): {name!r} {operator} takes a list")
    return value


def _scalar(policy: str, name: str, value: Any) -> Any:
    if not isinstance(value, _SCALARS):
        raise DeclarationError(f"{policy}.scope(): the value of {name!r} must be a plain value or an "
                               f"operator dict, not {type(value).__name__}")
    return value


# -- the same rule, tested in the process (by the one matcher live feeds use for filters) -------

def admits(alternatives: Alternatives | None, document: Mapping[str, Any]) -> bool:
    """Whether `document` is within compiled alternatives (None reads everything, () nothing)."""
    if alternatives is None:
        return True
    return any(satisfies(_conditions(alternative), document) for alternative in alternatives)


def _conditions(alternative: Mapping[str, Any]) -> Iterator[Condition]:
    for name, value in alternative.items():
        for operator, operand in (value.items() if isinstance(value, dict) else ((EXACT, value),)):
            yield name, operator, operand
