"""Filters through relations: `user.name[eq]=Ann` (a BelongsTo declared `.filterable("name")`), and
`has=comments` / `-has=comments` (HasMany and BelongsToMany: at least one related record, or none).

Parsing puts a `Through` where a condition's values go: `(user_id, "in", Through("user", ...))`,
`("id", "in", Through("comments", exists=True))` for a has-many, `(tag_ids, "in", Through("tags", ...))`
for a belongs-to-many (`nin` for `-has`). So they join `any`, `all` and `not` like any condition.

Before the query runs, `resolve` reads each Through in a step of its own, on the related repository
alone and within its read rules for this user (its policy's `allow_restify`, `scope()` and `show`, as
relation search does, `service.core.reading.through`): the ids of the parents that match, of the
children's owners, or of the related records; a record the user may not see never matches. A
Through then becomes that list: the query stays a plain `$in` / `$nin` on the id or a key, the same
on both storage profiles, with no `$lookup`. A step reads at most `query.max_relation_sort` records;
more is a 400 naming the parameter and the setting.

A relation whose repository the user may not read at all (its policy's `allow_restify` is false, or
the token lacks `<repository>:read`) is a 400 naming it: under `not`, no match would turn into every
record. Live feeds refuse them: one changed record cannot tell whether another still matches.
"""
import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from service.core.declarations import READ, Context, Field, ability, describe
from service.core.kernel import Condition, choices, leaves, refuse, refuse_field, with_values
from service.core.reading.query import FILTER_NAME, IndexQuery, parse_operator
from service.core.reading.through import visible_records
from storage import Filter

if TYPE_CHECKING:
    from service.core.declarations import Resource, ResourceRelation, Restify

HAS, HAS_NOT = "has", "hasNot"  # the filter object's members; REST's `has=` and `-has=`
_TO_MANY = ("has_many", "belongs_to_many")


@dataclass(frozen=True)
class Through:
    """What a filter asks of related records: those of `relation` matching `equals` and `conditions`
    (a BelongsTo's filterable fields), or any at all (`exists`, `has=`)."""
    relation: str
    equals: tuple[tuple[str, Any], ...] = ()
    conditions: tuple[Condition, ...] = ()
    exists: bool = False
    label: str = field(default="", compare=False)  # where it was sent, for a refusal


class Found(tuple[str, ...]):
    """The ids a Through resolved to; it still names the Through, which a cursor is bound to (the
    ids may change as records do)."""
    through: Through | None = None

    @staticmethod
    def of(ids: Iterable[str], through: Through) -> "Found":
        found = Found(dict.fromkeys(ids))
        found.through = through
        return found


def filterable_relations(resource: "Resource") -> dict[str, "ResourceRelation"]:
    """The relations `<name>.<field>` filters through."""
    return {name: r for name, r in resource.relations.items() if r.filter_fields}


def existing_relations(resource: "Resource") -> list[str]:
    """The relations `has=` takes: the to-many ones."""
    return sorted(name for name, r in resource.relations.items() if r.kind in _TO_MANY)


def target_fields(relation: "ResourceRelation") -> list[Field]:
    """The related fields a relation filters by, each filterable (the declaration allows them)."""
    fields = []
    for target_field in relation.target.fields(Context(action="declaration")):
        if target_field.name in relation.filter_fields:
            allowed = copy.copy(target_field)
            allowed.is_matchable = True
            fields.append(allowed)
    return fields


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
        match = FILTER_NAME.match(name)
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


def relation_conditions(conditions: Iterable[Condition]) -> list[Through]:
    """The Throughs of `conditions`, inside compounds too."""
    return [value for _, _, value in leaves(conditions) if isinstance(value, Through)]


async def resolve(app: "Restify", resource: "Resource", context: Context,
                  conditions: Sequence[Condition]) -> tuple[Condition, ...]:
    """`conditions` with each Through read into the ids it stands for (see the module)."""
    found: dict[Through, Found] = {}
    for asked in relation_conditions(conditions):
        if asked not in found:
            found[asked] = Found.of(await _ids(app, resource, context, asked), asked)
    if not found:
        return tuple(conditions)
    return with_values(conditions, lambda _, value: found[value] if isinstance(value, Through) else value)


def bindable(conditions: Iterable[Condition]) -> tuple[Condition, ...]:
    """`conditions` as a cursor is bound to them: a relation filter by what it asks, not the ids it found."""
    return with_values(conditions, lambda _, value: repr(value.through) if isinstance(value, Found) else value)


async def _ids(app: "Restify", resource: "Resource", context: Context, asked: Through) -> list[str]:
    relation = resource.relations[asked.relation]
    target = relation.target
    label = asked.label or asked.relation
    seen_target = app.registry.policies.gate(target.model, context.user)
    if not seen_target.entered or not context.can(ability(target.name, READ)):
        refuse(label, f"The filter through {asked.relation!r} reads {target.name}, which this user may not read.")
    if not asked.exists:
        where = Filter(equals=dict(asked.equals), conditions=asked.conditions)
        return [row["id"] for row in await visible_records(app, target, context, where, None,
                                                           f"filter through {asked.relation}", label)]
    what = f"{HAS} {asked.relation}"
    if relation.kind == "has_many":
        present = Filter(conditions=((relation.foreign_key, "null", False),))
        rows = await visible_records(app, target, context, present, None, what, label)
        return [row[relation.foreign_key] for row in rows if isinstance(row.get(relation.foreign_key), str)]
    return [row["id"] for row in await visible_records(app, target, context, Filter(), None, what, label)]
