"""Turns the relation fields a query selects into the `related` paths the
operations layer loads in batches, so `postList { user { name } comments { body } }`
costs one query per relation, exactly like `?related=user,comments` on REST; and the
fields it selects into sparse fieldsets, so the answer's budget counts what the query
writes (`postList { title }` does not pay for every post's body)."""
from collections.abc import Mapping

from graphql import (
    FieldNode, FragmentDefinitionNode, FragmentSpreadNode, GraphQLResolveInfo, InlineFragmentNode, SelectionSetNode,
    value_from_ast_untyped,
)

from service.core.declarations.registry import Resource

# Fields of every type that are not attributes: always written, whatever a fieldset keeps.
ALWAYS = frozenset(("id", "version", "__typename"))


def _fields(selection_set: SelectionSetNode | None, fragments: Mapping[str, FragmentDefinitionNode]) -> list[FieldNode]:
    found: list[FieldNode] = []
    for node in selection_set.selections if selection_set else ():
        if isinstance(node, FieldNode):
            found.append(node)
        elif isinstance(node, InlineFragmentNode):
            found.extend(_fields(node.selection_set, fragments))
        elif isinstance(node, FragmentSpreadNode):
            fragment = fragments.get(node.name.value)
            if fragment is not None:
                found.extend(_fields(fragment.selection_set, fragments))
    return found


def related_paths(resource: Resource, info: GraphQLResolveInfo, nodes: list[FieldNode] | None = None,
                  prefix: str = "", depth: int = 3) -> list[str]:
    """Dotted relation paths selected under the current field (e.g. ["comments", "comments.user"])."""
    paths: list[str] = []
    if depth <= 0:
        return paths
    for parent in nodes if nodes is not None else info.field_nodes:
        for node in _fields(parent.selection_set, info.fragments):
            relation = resource.relations.get(node.name.value)
            if relation is None:
                continue
            path = f"{prefix}{node.name.value}"
            paths.append(path)
            paths.extend(related_paths(relation.target, info, [node], f"{path}.", depth - 1))
    return sorted(set(paths))


def leaf_paths(paths: list[str]) -> str:
    """The `related` parameter: only the longest paths (`comments.user` implies `comments`)."""
    return ",".join(p for p in paths if not any(o.startswith(p + ".") for o in paths))


def related_firsts(resource: Resource, info: GraphQLResolveInfo, nodes: list[FieldNode] | None = None) -> list[int]:
    """The `first` arguments given to the relation fields selected under the current field, at any level."""
    found: list[int] = []
    for parent in nodes if nodes is not None else info.field_nodes:
        for node in _fields(parent.selection_set, info.fragments):
            relation = resource.relations.get(node.name.value)
            if relation is None:
                continue
            for argument in node.arguments or ():
                if argument.name.value == "first":
                    value = value_from_ast_untyped(argument.value, info.variable_values.coerced)
                    if isinstance(value, int):
                        found.append(value)
            found.extend(related_firsts(relation.target, info, [node]))
    return found


def selected_names(resource: Resource, info: GraphQLResolveInfo, depth: int) -> dict[str, frozenset[str]]:
    """Per type, the fields the current field selects of it (its records, and through relation fields
    `depth` levels down), besides those every type writes: what the answer's fieldsets may keep."""
    return selected_in(resource, list(info.field_nodes), info.fragments, depth)


def selected_in(resource: Resource, field_nodes: list[FieldNode], fragments: Mapping[str, FragmentDefinitionNode],
                depth: int) -> dict[str, frozenset[str]]:
    """`selected_names` of the field written by `field_nodes` of a document with `fragments`."""
    names: dict[str, set[str]] = {}

    def walk(owner: Resource, nodes: list[FieldNode], left: int) -> None:
        chosen = names.setdefault(owner.name, set())
        for node in (n for parent in nodes for n in _fields(parent.selection_set, fragments)):
            name = node.name.value
            if name not in ALWAYS:
                chosen.add(name)
            relation = owner.relations.get(name)
            if relation is not None and left > 0:
                walk(relation.target, [node], left - 1)

    walk(resource, field_nodes, depth)
    return {type_name: frozenset(chosen) for type_name, chosen in names.items()}


def selected_here(info: GraphQLResolveInfo) -> frozenset[str]:
    """The fields the current field selects of its records, besides those every type writes."""
    return frozenset(node.name.value for parent in info.field_nodes
                     for node in _fields(parent.selection_set, info.fragments) if node.name.value not in ALWAYS)
