"""Filters through relations: `user.name[eq]=Ann` (a BelongsTo declared `.filterable("name")`), and
`has=comments` / `-has=comments` (HasMany and BelongsToMany: at least one related record, or none).

Parsing puts a `Through` where a condition's values go: `(user_id, "in", Through("user", ...))`,
`("id", "in", Through("comments", exists=True))` for a has-many, `(tag_ids, "in", Through("tags", ...))`
for a belongs-to-many (`nin` for `-has`). So they join `any`, `all` and `not` like any condition.

Before the query runs, `resolve` (`service.core.reading.through`) reads each Through in a step of its
own, on the related repository alone and within its read rules for this user (its policy's
`allow_restify`, `scope()` and `show`, as relation search does): the ids of the parents that match, of the
children's owners, or of the related records; a record the user may not see never matches. A
Through then becomes that list: the query stays a plain `$in` / `$nin` on the id or a key, the same
on both storage profiles, with no `$lookup`. A step reads at most `query.max_relation_sort` records;
more is a 400 naming the parameter and the setting.

A relation whose repository the user may not read at all (its policy's `allow_restify` is false, or
the token lacks `<repository>:read`) is a 400 naming it: under `not`, no match would turn into every
record. Live feeds refuse them: one changed record cannot tell whether another still matches.
"""
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from service.core.declarations import Context, Field, describe
from service.core.kernel import RESERVED, Condition, Through, choices, refuse, refuse_field
from service.core.reading.query import FILTER_NAME, IndexQuery, parse_operator

if TYPE_CHECKING:
    from service.core.declarations import Resource, ResourceRelation

HAS, HAS_NOT = "has", "hasNot"  # the filter object's members; REST's `has=` and `-has=`
_TO_MANY = ("has_many", "belongs_to_many")


def filterable_relations(resource: "Resource") -> dict[str, "ResourceRelation"]:
    """The relations `<name>.<field>` filters through."""
    return {name: r for name, r in resource.relations.items() if r.filter_fields}


def existing_relations(resource: "Resource") -> list[str]:
    """The relations `has=` takes: the to-many ones."""
    return sorted(name for name, r in resource.relations.items() if r.kind in _TO_MANY)


def target_fields(relation: "ResourceRelation") -> list[Field]:
    """The related fields a relation filters by (`.filterable(...)`: matchable there or not)."""
    return [f for f in relation.target.fields(Context(action="declaration")) if f.name in relation.filter_fields]


def relation_of(resource: "Resource", name: str, label: str) -> "ResourceRelation":
    """The filterable relation `name`, else a 400 naming `label`."""
    relation = filterable_relations(resource).get(name)
    if relation is None:
        refuse(label, f"The relation {name!r} cannot be filtered through; the relations that can are: "
                      f"{choices(filterable_relations(resource))}.")
    return relation


def through(relation: "ResourceRelation", part: IndexQuery, label: str) -> Condition:
    """The condition that a record's parent matches `part` (a query on the parent's fields)."""
    return relation.local_key, "in", Through(relation.name, tuple(sorted(part.equals.items())),
                                             tuple(part.conditions), label=label)


def existence(resource: "Resource", name: Any, negated: bool, label: str) -> Condition:
    """`has` (`negated`: `-has` / `hasNot`) of the to-many relation `name`."""
    relation = resource.relations.get(name) if isinstance(name, str) else None
    if relation is None or relation.kind not in _TO_MANY:
        refuse(label, f"The relation {name!r} is not one {HAS} takes; it takes: "
                      f"{choices(existing_relations(resource))}.")
    key = "id" if relation.kind == "has_many" else relation.local_key
    return key, "nin" if negated else "in", Through(relation.name, exists=True, label=label)


def relation_parameters(query: IndexQuery, resource: "Resource", params: Mapping[str, str],
                        repeated: Mapping[str, Sequence[str]], most: int | None) -> None:
    """REST's `<relation>.<field>[op]=v` (one condition per relation: its parameters hold together),
    `has=a,b` and `-has=a,b`, into `query.conditions`."""
    parts: dict[str, IndexQuery] = {}
    for name, raw in params.items():
        match = FILTER_NAME.match(name) if name == HAS or name not in RESERVED else None
        if match is None:
            continue
        if match["field"] == HAS and not match["sub"]:
            if match["op"] is not None:
                refuse(name, f"The {HAS} parameter takes no operator: {HAS}=<relations> or -{HAS}=<relations>.")
            query.conditions.extend(existence(resource, item.strip(), bool(match["negated"]), name)
                                    for item in raw.split(",") if item.strip())
            continue
        if not match["sub"]:
            continue
        relation = relation_of(resource, match["field"], name)
        by_name = {f.name: f for f in target_fields(relation)}
        target_field = by_name.get(match["sub"])
        if target_field is None:
            refuse_field(name, f"{relation.name}.{match['sub']}", (f"{relation.name}.{n}" for n in by_name))
        part = parts.setdefault(relation.name, IndexQuery(per_page=1))
        prefixed = replace(describe(target_field), name=f"{relation.name}.{target_field.name}")
        parse_operator(part, prefixed, name, match, raw, repeated.get(name), most)
    for relation_name, part in parts.items():
        unprefixed = IndexQuery(per_page=1, equals={k.partition(".")[2]: v for k, v in part.equals.items()},
                                conditions=[(n.partition(".")[2], o, v) for n, o, v in part.conditions])
        query.conditions.append(through(resource.relations[relation_name], unprefixed, relation_name))
