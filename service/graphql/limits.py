"""Depth and cost of a query document, computed before anything runs.

Cost estimates the fields resolved: a list field (one with a `first` argument)
multiplies the cost of what it selects by `first` (or its default)."""
from typing import Any

from graphql import (
    DocumentNode, FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode, IntValueNode,
    OperationDefinitionNode, SelectionSetNode, VariableNode,
)


def _first(node: FieldNode, variables: dict[str, Any], default: int) -> int | None:
    for argument in node.arguments or ():
        if argument.name.value == "first":
            value = argument.value
            if isinstance(value, IntValueNode):
                return int(value.value)
            if isinstance(value, VariableNode):
                found = variables.get(value.name.value)
                return found if isinstance(found, int) else default
            return default
    return None


class Measure:
    def __init__(self, document: DocumentNode, variables: dict[str, Any] | None, default_first: int,
                 list_fields: set[str]) -> None:
        self.fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
        self.operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        self.variables = variables or {}
        self.default_first = default_first
        self.list_fields = list_fields  # field names that return lists even without `first` written out

    def depth(self) -> int:
        return max((self._depth(op.selection_set, set()) for op in self.operations), default=0)

    def cost(self) -> int:
        return sum(self._cost(op.selection_set, set()) for op in self.operations)

    def _children(self, selection_set: SelectionSetNode | None, seen: set[str]) -> list[tuple[FieldNode, set[str]]]:
        found: list[tuple[FieldNode, set[str]]] = []
        for node in selection_set.selections if selection_set else ():
            if isinstance(node, FieldNode):
                if not node.name.value.startswith("__"):
                    found.append((node, seen))
            elif isinstance(node, InlineFragmentNode):
                found.extend(self._children(node.selection_set, seen))
            elif isinstance(node, FragmentSpreadNode) and node.name.value not in seen:
                fragment = self.fragments.get(node.name.value)
                if fragment is not None:
                    found.extend(self._children(fragment.selection_set, seen | {node.name.value}))
        return found

    def _depth(self, selection_set: SelectionSetNode | None, seen: set[str]) -> int:
        children = self._children(selection_set, seen)
        return 1 + max((self._depth(f.selection_set, s) for f, s in children if f.selection_set), default=0) \
            if children else 0

    def _cost(self, selection_set: SelectionSetNode | None, seen: set[str]) -> int:
        total = 0
        for field, inner in self._children(selection_set, seen):
            own = 1 + (self._cost(field.selection_set, inner) if field.selection_set else 0)
            first = _first(field, self.variables, self.default_first)
            if first is None and field.name.value in self.list_fields:
                first = self.default_first
            total += own * max(first or 1, 1)
        return total
