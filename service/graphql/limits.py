"""Selections, depth and cost of a query document, measured before anything runs.

Selections count every field the document asks for, aliases included, a fragment counted wherever it
is spread: the work executing it would take. Depth is the longest chain of fields. Cost estimates the
fields resolved: a list field (one with a `first` argument, relation lists included at any depth)
multiplies the cost of what it selects by `first`, or by its default where `first` is not given (the
schema's default of that field: a repository's page size for its lists). A
relation list given no cap (`first: null` or a negative `first`) returns every record loaded with
its parent: it is counted at the default too, and the answer's byte budget bounds what it writes.
Meta fields (`__typename`, introspection) count as selections only.

Each fragment is measured once, after the fragments it spreads, so measuring takes time linear in the
document however often fragments spread each other (ten fragments each spreading the next four times
select a million fields in 500 bytes). A spread that closes a cycle counts nothing here; validation
refuses such documents.
"""
from dataclasses import dataclass
from typing import Any, cast

from graphql import (
    DocumentNode, FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode, IntValueNode,
    OperationDefinitionNode, SelectionSetNode, VariableNode,
)


@dataclass(frozen=True)
class Size:
    selections: int
    depth: int
    cost: int


_NOTHING = Size(0, 0, 0)


def _first_argument(node: FieldNode) -> Any:
    return next((argument.value for argument in node.arguments or () if argument.name.value == "first"), None)


class Measure:
    def __init__(self, document: DocumentNode, default_first: int, list_fields: dict[str, int]) -> None:
        self.fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
        self.operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        self.default_first = default_first
        self.list_fields = list_fields  # fields that return lists even without `first` written out: their default
        self.uses_variables = False  # a `first: $n` makes the cost depend on the request's variables
        self._order = self._dependency_order()
        self._fixed = None if self.uses_variables else self._measure({})

    def size(self, variables: dict[str, Any] | None = None) -> Size:
        return self._fixed if self._fixed is not None else self._measure(variables or {})

    # -- the order: each fragment after those it spreads ------------------------------------------
    def _spreads(self, selection_set: SelectionSetNode | None) -> list[str]:
        found: list[str] = []
        pending = [selection_set]
        while pending:
            current = pending.pop()
            for node in current.selections if current else ():
                if isinstance(node, FragmentSpreadNode):
                    found.append(node.name.value)
                    continue
                if isinstance(node, FieldNode) and isinstance(_first_argument(node), VariableNode):
                    self.uses_variables = True
                pending.append(cast(FieldNode | InlineFragmentNode, node).selection_set)
        return found

    def _dependency_order(self) -> list[str]:
        spreads = {name: self._spreads(fragment.selection_set) for name, fragment in self.fragments.items()}
        for operation in self.operations:
            self._spreads(operation.selection_set)  # only for `uses_variables`
        order: list[str] = []
        started: set[str] = set()
        for root in spreads:
            if root in started:
                continue
            started.add(root)
            stack = [(root, iter(spreads[root]))]  # iterative: a chain of fragments can be long
            while stack:
                name, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    order.append(name)
                elif child in spreads and child not in started:
                    started.add(child)
                    stack.append((child, iter(spreads[child])))
        return order

    # -- measuring ----------------------------------------------------------------------------------
    def _measure(self, variables: dict[str, Any]) -> Size:
        measured: dict[str, Size] = {}
        for name in self._order:
            measured[name] = self._selection_set(self.fragments[name].selection_set, measured, variables)
        sizes = [self._selection_set(op.selection_set, measured, variables) for op in self.operations]
        return Size(sum(s.selections for s in sizes), max((s.depth for s in sizes), default=0),
                    sum(s.cost for s in sizes))

    def _selection_set(self, selection_set: SelectionSetNode | None, measured: dict[str, Size],
                       variables: dict[str, Any]) -> Size:
        selections = depth = cost = 0
        for node in selection_set.selections if selection_set else ():
            if isinstance(node, FieldNode):
                inner = self._selection_set(node.selection_set, measured, variables)
                selections += 1 + inner.selections
                if not node.name.value.startswith("__"):
                    depth = max(depth, 1 + inner.depth)
                    cost += (1 + inner.cost) * self._multiplier(node, variables)
                continue
            if isinstance(node, FragmentSpreadNode):
                inner = measured.get(node.name.value, _NOTHING)
            else:
                inner = self._selection_set(cast(InlineFragmentNode, node).selection_set, measured, variables)
            selections += inner.selections
            depth = max(depth, inner.depth)
            cost += inner.cost
        return Size(selections, depth, cost)

    def _multiplier(self, node: FieldNode, variables: dict[str, Any]) -> int:
        value = _first_argument(node)
        default = self.list_fields.get(node.name.value, self.default_first)
        if value is None:
            first = default if node.name.value in self.list_fields else 1
        elif isinstance(value, IntValueNode):
            first = int(value.value) if len(value.value) <= 18 else 10 ** 18  # int() refuses 4,300+ digits
        else:  # a variable (its value if that is an integer), null, or a literal that validation refuses
            found = variables.get(value.name.value) if isinstance(value, VariableNode) else None
            first = found if isinstance(found, int) else default
        return max(first, 1) if first >= 0 else default  # below 0: no cap
