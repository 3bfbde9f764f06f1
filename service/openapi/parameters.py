"""Query and path parameters of index, show and profile: the schemas `service.core.describing.parameters`
describes for every door, as OpenAPI parameters."""
from typing import Any

from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.description import INT64
from service.core.declarations.fields import Field
from service.core.declarations.registry import Resource
from service.core.describing.aggregates import aggregate_schemas
from service.core.describing.parameters import (count_schema, cursor_schema, fieldset_lists, fieldset_schema,
                                                filter_schema, filtered, include_schema, operator_schemas,
                                                per_page_schema, relation_searches, search_schema, sort_schema,
                                                force_schema, trashed_schema)
from service.core.reading.relation_filters import existing_relations, filterable_relations, target_fields
from service.core.reading.query import relation_sorts

Schema = dict[str, Any]


def _query(name: str, schema: Schema, description: str | None = None, **extra: Any) -> Schema:
    """A query parameter; without `description`, the schema's own text describes it."""
    schema = dict(schema)
    own = schema.pop("description", None)
    text = description or own
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": text, **extra}


def _count(name: str, description: str, **extra: Any) -> Schema:
    return _query(name, {"type": "integer", "minimum": 1, "maximum": INT64}, description, **extra)


def id_parameter(resource_name: str) -> Schema:
    return {"name": "id", "in": "path", "required": True,
            "schema": {"type": "string", "pattern": "^[0-9a-fA-F]{24}$"},
            "description": f"The id of a {resource_name} record (24 hex digits); any other value is a 404."}


def related_parameters(resource: Resource, settings: Settings) -> list[Schema]:
    """`related` and its alias `include`, with the allowed relation paths."""
    schema = include_schema(resource, settings)
    if schema is None:
        return []
    return [_query("related", schema),
            _query("include", schema, "The same as `related` (used when `related` is absent).")]


def relatable_parameter(settings: Settings, on_index: bool) -> Schema:
    default_size = int(settings.positive("pagination", "relatable_per_page"))
    text = (f"Records per has-many / belongs-to-many relation on show (default {default_size}"
            + (f", at most {settings.max_per_page}" if settings.max_per_page else "") + ").")
    if on_index:
        text += " Checked on index too, where relations are loaded whole."
    return _count("relatablePerPage", text)


def fieldset_parameters(resource: Resource, settings: Settings, action: str) -> list[Schema]:
    """`fields` (the answered type) and `fields[<type>]` for each type the answer may hold."""
    lists = fieldset_lists(resource, settings, Context(door="rest", action=action))
    own = fieldset_schema(resource.name, lists[resource.name])
    shorthand = _query("fields", own, f"The same as fields[{resource.name}] (not both). " + own["description"])
    return [shorthand, *(_query(f"fields[{name}]", fieldset_schema(name, names)) for name, names in lists.items())]


def index_parameters(resource: Resource, fields: list[Field], settings: Settings) -> list[Schema]:
    parameters = [
        _count("page", "The page to return, from 1 (default 1)."),
        # `per_page` is accepted too (when `perPage` is absent) but documented once, as the README writes it.
        _count("perPage", per_page_schema(resource, settings)["description"]),
        relatable_parameter(settings, on_index=True),
    ]
    search = search_schema(fields, settings, relation_searches(resource))
    if search:
        parameters.append(_query("search", search))
    parameters.append(_query("sort", sort_schema(fields, sorted(relation_sorts(resource)))))
    parameters += related_parameters(resource, settings)
    parameters += filter_parameters(fields) + relation_filter_parameters(resource)
    parameters += [_query("count", count_schema()), _query("cursor", cursor_schema())]
    return parameters + trashed_parameters(resource) + fieldset_parameters(resource, settings, "index")


def filter_parameters(fields: list[Field]) -> list[Schema]:
    """`<field>=v` and `<field>[op]=v` of each matchable field (index and aggregate)."""
    parameters = []
    for field in filtered(fields):
        parameters.append(_query(field.name, filter_schema(field, json_null=False)))
        # `<field>[op]`: one parameter per operator; a deepObject `<field>` would clash with `<field>=v`.
        parameters += [_query(f"{field.name}[{op}]", schema) for op, schema in operator_schemas(field).items()]
    matchable = [field.name for field in fields if field.is_matchable]
    if matchable:
        parameters.append(_query("filter", {"type": "string", "contentMediaType": "application/json"}, (
            "A filter object as JSON, combined with the other filters by AND: per field an object of the "
            f"operators its `<field>[op]` parameters take (fields: {', '.join(matchable)}; `null` is `isNull`), "
            'and `any` / `all` (lists of filter objects) and `not` (one), e.g. `{"any": [{"' + matchable[0]
            + '": {"eq": 1}}, {"not": {"' + matchable[-1] + '": {"isNull": true}}}]}`; at most 3 deep and '
            "50 operators in all. Malformed JSON, an unknown field or an operator beginning with `$` is a 400.")))
    return parameters


def relation_filter_parameters(resource: Resource) -> list[Schema]:
    """`<relation>.<field>=v` and `<relation>.<field>[op]=v` per filterable BelongsTo field, `has` and `-has`."""
    parameters = []
    for name, relation in filterable_relations(resource).items():
        through = f"Through {name}, as you may see it (a {name} you may not see never matches): "
        for field in target_fields(relation):
            exact = filter_schema(field, json_null=False)
            parameters.append(_query(f"{name}.{field.name}", {**exact, "description": through + exact["description"]}))
            parameters += [_query(f"{name}.{field.name}[{op}]", {**schema, "description": through + text})
                           for op, schema in operator_schemas(field).items() for text in [schema["description"]]]
    to_many = existing_relations(resource)
    if to_many:
        listed = ", ".join(to_many)
        names = {"type": "string", "pattern": "^(" + "|".join(to_many) + ")(,(" + "|".join(to_many) + "))*$"}
        # `-has` (none of them) is not listed apart: client generators read `has` and `-has` as one name.
        parameters.append(_query("has", names, f"Only records with at least one related record you may see in each "
                                               f"of these relations ({listed}), comma-separated; `-has=` the same "
                                               "list: only records with none."))
    return parameters


def aggregate_parameters(resource: Resource, fields: list[Field], settings: Settings) -> list[Schema]:
    """`<r>/aggregate`'s: group, metrics and sort, then what chooses the records, as on index."""
    parameters = [_query(name, schema) for name, schema in aggregate_schemas(fields).items()]
    search = search_schema(fields, settings, relation_searches(resource))
    if search:
        parameters.append(_query("search", search))
    return parameters + filter_parameters(fields) + relation_filter_parameters(resource) + trashed_parameters(resource)


def show_parameters(resource: Resource, settings: Settings, action: str = "show") -> list[Schema]:
    trashed = trashed_parameters(resource) if action == "show" else []
    return (related_parameters(resource, settings) + [relatable_parameter(settings, on_index=False)] + trashed
            + fieldset_parameters(resource, settings, action))


def trashed_parameters(resource: Resource) -> list[Schema]:
    """`trashed` of index and show, in a repository with soft deletes."""
    return [_query("trashed", trashed_schema())] if resource.soft_deletes else []


def force_parameters(resource: Resource) -> list[Schema]:
    """`force` of a delete, in a repository with soft deletes."""
    return [_query("force", force_schema())] if resource.soft_deletes else []
