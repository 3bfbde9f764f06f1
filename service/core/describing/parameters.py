"""JSON Schemas of the index and show parameters, as `service.core.reading.query` reads them.

Built once for every door that describes them: MCP puts them in tool arguments, OpenAPI in query
parameters (where a schema's `description` becomes the parameter's). A schema carries its own text.
"""
import re
from typing import TYPE_CHECKING, Any

from service.config import Settings
from service.core.declarations import Context, Field, describe, sort_keys
from service.core.kernel import EXACT, FLAG, OPERATORS, RESERVED, Arity, for_type, query_text
from service.core.reading import max_related_depth, selectable

if TYPE_CHECKING:
    from service.core.declarations import Resource

Schema = dict[str, Any]
MAX_LISTED_PATHS = 200  # above this many relation paths, `include` gets no pattern
_NAME = re.compile(r"^\w+$")


def _list_pattern(items: list[str]) -> str:
    one = "(?:" + "|".join(re.escape(item) for item in items) + ")"
    return f"^{one}(?:,{one})*$"


def per_page_schema(resource: "Resource", settings: Settings) -> Schema:
    default_size = resource.per_page or int(settings.positive("pagination", "per_page"))
    cap = settings.max_per_page
    text = f"Records per page (default {min(default_size, cap) if cap else default_size}"
    text += f"; at most {cap}, a larger value is clamped)." if cap else ")."
    return {"type": "integer", "minimum": 1, "description": text}


def relation_searches(resource: "Resource") -> list[str]:
    """`<relation>.<field>` for each related field `search` also matches (`BelongsTo(...).searchable`)."""
    return [f"{name}.{field_name}" for name, relation in sorted(resource.relations.items())
            for field_name in relation.search_fields]


def search_schema(fields: list[Field], settings: Settings, through: list[str] | None = None) -> Schema | None:
    """`through`: the related fields searched too (`relation_searches`)."""
    searchable = [f.name for f in fields if f.is_searchable] + (through or [])
    if not searchable:
        return None
    limit = int(settings.positive("query", "max_search_length"))
    texts = [f.name for f in fields if f.is_text]
    text = f"Case-insensitive text searched in: {', '.join(searchable)}."
    if texts:
        text += (f" Where the database searches text indexes (MongoDB), {', '.join(texts)} "
                 f"{'is' if len(texts) == 1 else 'are'} searched by word rather than by substring.")
    return {"type": "string", "maxLength": limit, "description": text}


def sort_schema(fields: list[Field], through: list[str] | None = None) -> Schema:
    """`through`: the `<relation>.<field>` keys allowed first (`query.relation_sorts`)."""
    sortable = sort_keys(fields)
    example = "-created_at"  # newest first
    schema: Schema = {"type": "string"}
    ranked = any(f.is_text for f in fields) and "relevance" not in sortable
    if all(_NAME.match(name) for name in sortable) and all(_NAME.match(n.replace(".", "_")) for n in through or []):
        one = f"[-+]?(?:{'|'.join(sortable)})"
        first = f"[-+]?(?:{'|'.join(re.escape(n) for n in [*sorted(through), *sortable])})" if through else one
        schema["pattern"] = f"^{f'(?:relevance|{first})' if ranked else first}(?:,{one})*$"
    text = (f"Comma-separated fields to sort by, '-' first for descending (e.g. '{example}', newest first); "
            f"sortable: {', '.join(sortable)}. Ties are broken by id; any other field is a 400.")
    if through:
        text += (f" A related field ({', '.join(sorted(through))}) may come first: records in the order of their "
                 "related record, those without a visible one last; with page, not cursor.")
    if ranked:
        text += (" 'relevance' (first, without a sign, with search) lists the most relevant records first where "
                 "the database ranks text (MongoDB; a 400 on the embedded server); with page, not cursor.")
    schema["description"] = text
    return schema


def relation_paths(resource: "Resource", depth: int) -> list[str]:
    """Every dotted relation path from `resource`, at most `depth` levels deep."""
    paths: list[str] = []

    def walk(owner: "Resource", prefix: str, left: int) -> None:
        for relation_name, relation in sorted(owner.relations.items()):
            path = f"{prefix}{relation_name}"
            paths.append(path)
            if left > 1 and len(paths) <= MAX_LISTED_PATHS:
                walk(relation.target, path + ".", left - 1)

    walk(resource, "", depth)
    return paths


def include_schema(resource: "Resource", settings: Settings) -> Schema | None:
    """`include` (and its REST alias `related`), with the allowed relation paths; None without relations."""
    if not resource.relations:
        return None
    depth = max_related_depth(settings)
    paths = relation_paths(resource, depth)
    direct = sorted(resource.relations)
    schema: Schema = {"type": "string"}
    if len(paths) <= MAX_LISTED_PATHS and all(_NAME.match(p.replace(".", "_")) for p in paths):
        schema["pattern"] = _list_pattern(paths)
    text = f"Comma-separated relations to load into `relationships`: {', '.join(direct)}."
    if depth > 1:
        nested = next((p for p in paths if "." in p), None)
        text += f" Dotted paths load nested ones{f' (e.g. {nested})' if nested else ''}, at most {depth} levels."
    schema["description"] = text + " An unknown or too deep path is a 400."
    return schema


def fieldset_types(resource: "Resource", settings: Settings) -> list["Resource"]:
    """The resource and every type its relation paths reach: what `fields[<type>]` may name usefully."""
    found = {resource.name: resource}
    for path in relation_paths(resource, max_related_depth(settings)):
        owner = resource
        for part in path.split("."):
            owner = owner.relations[part].target
        found.setdefault(owner.name, owner)
    return list(found.values())


def fieldset_lists(resource: "Resource", settings: Settings, context: Context) -> dict[str, list[str]]:
    """Per type the answer may hold, the names `fields[<type>]` may list."""
    return {target.name: selectable(target, context) for target in fieldset_types(resource, settings)}


FIELDSETS_TEXT = ("Sparse fieldsets: only these attributes and relations come back (id, type and meta always "
                  "do); a relation listed here is not loaded by it (use include). An unknown or hidden name is "
                  "a 400.")


def fieldset_schema(type_name: str, names: list[str]) -> Schema:
    """One query-string fieldset, `fields[<type>]=a,b` (empty: only id, type and meta)."""
    schema: Schema = {"type": "string"}
    if all(_NAME.match(name) for name in names):
        schema["pattern"] = f"^(?:{_list_pattern(names)[1:-1]})?$"
    schema["description"] = f"Comma-separated names of {type_name} to keep: {', '.join(names)}. " + FIELDSETS_TEXT
    return schema


def fields_schema(resource: "Resource", settings: Settings, context: Context) -> Schema:
    """`fields` as tool arguments: a list (for the listed type) or an object of lists per type."""
    lists = fieldset_lists(resource, settings, context)

    def names(items: list[str]) -> Schema:
        return {"type": "array", "items": {"type": "string", "enum": items}, "uniqueItems": True}

    return {"anyOf": [names(lists[resource.name]),
                      {"type": "object", "properties": {t: names(n) for t, n in lists.items()},
                       "additionalProperties": False}],
            "description": f"A list of {resource.name} names, or an object of such lists per type "
                           f"({', '.join(lists)}). " + FIELDSETS_TEXT}


def filtered(fields: list[Field]) -> list[Field]:
    """The fields an index filters on by name: matchable ones whose name is no reserved parameter."""
    return [f for f in fields if f.is_matchable and f.name not in RESERVED]


def filter_schema(field: Field, json_null: bool) -> Schema:
    """The value of `<field>=v`, in the field's own type. JSON arguments say "without one" with null;
    a query string says it with the text `null`."""
    description = describe(field)
    kind = description.json_type
    text = query_text(OPERATORS[EXACT], field.name, description.type, "null" if json_null else "`null`")
    return {"type": [kind, "null"] if json_null else kind, "description": text}


def trashed_schema() -> Schema:
    """`trashed` of a repository with soft deletes."""
    return {"type": "string", "enum": ["with", "only"],
            "description": "with: trashed records too; only: only them (each one the policy's view_trashed, else "
                           "delete, lets you see). Without it, trashed records are left out."}


def force_schema() -> Schema:
    """`force` of a delete in a repository with soft deletes."""
    return {"type": "string", "enum": ["true", "false"],
            "description": "true deletes the record for good, trashed or not (policy force_delete, else delete); "
                           "without it the record is trashed, and restore brings it back."}


def count_schema() -> Schema:
    return {"type": "string", "enum": ["exact", "none"],
            "description": "exact (default) counts the matching records; none leaves meta.total, meta.last_page "
                           "and links.last null, for lists where a count costs too much."}


def cursor_schema() -> Schema:
    return {"type": "string",
            "description": "An opaque position from meta.next_cursor / meta.prev_cursor (empty: the first page), "
                           "instead of `page`. It is signed and bound to its sort, filters and perPage: altered, "
                           "or sent with others, it is a 400."}


def operator_schemas(field: Field) -> dict[str, Schema]:
    """The value of `<field>[op]=v` for each operator the field's type allows (but `eq`, which is
    `<field>=v`), as a query string carries it."""
    description = describe(field)
    kind = description.json_type
    schemas: dict[str, Schema] = {}
    for op in for_type(description.type):
        if op.exact:
            continue
        schemas[op.name] = {**_query_value(op.arity, kind), "description": query_text(op, field.name, description.type)}
    return schemas


def _query_value(arity: Arity, kind: str) -> Schema:
    """What a query string carries for an operator of this arity: one value, a comma list, `low,high`, a flag."""
    if arity is FLAG:
        return {"type": "boolean"}
    if arity.size == 1:
        return {"type": kind}
    if arity.size is None:
        return {"type": "string"}
    return {"type": "string", "pattern": "^" + ",".join(["[^,]*"] * arity.size) + "$"}
