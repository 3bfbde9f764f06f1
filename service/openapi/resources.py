"""Component schemas of one repository: its attributes, resource object, relationships,
list envelope, and the request bodies of store, PUT, PATCH and multipart writes.

Named `<resource>.<Part>` (`posts.Resource`, `posts.Store`...), so related resources
refer to each other by `$ref` and recursive relations stay finite."""
from typing import Any

from service.core.declarations.context import Context
from service.core.declarations.exposure import DESCRIBING
from service.core.declarations.description import describe
from service.core.declarations.fields import Field
from service.core.declarations.registry import Resource
from service.core.describing import schemas as attributes
from service.core.reading.serializer import TIMESTAMPS, visible
from service.core.writing.validation import writable
from service.openapi.components import schema_ref

Schema = dict[str, Any]
WRITE_ACTIONS = ("store", "update", "patch")


def fields_for(resource: Resource, action: str) -> list[Field]:
    """The repository's fields as an operation with `action` would see them."""
    return resource.fields(Context(door="rest", action=action, extras={DESCRIBING: True}))


def hashes_passwords(resource: Resource, action: str) -> bool:
    """Whether the action hashes or checks a password (a password field, or `current_password`): then
    it shares the hashing lane, whose full queue answers 429."""
    fields = fields_for(resource, action)
    return any(f.kind == "password" for f in writable(fields)) or attributes.asks_current_password(fields, action)


def name(resource_name: str, part: str) -> str:
    return f"{resource_name}.{part}"


def attributes_schema(fields: list[Field]) -> Schema:
    """Every visible field, then the timestamps (`service.core.reading.serializer.attributes`). None is required:
    sparse fieldsets (`fields[<type>]`) answer only the names asked for; without them every one comes."""
    properties = {f.name: attributes.output_schema(f) for f in visible(fields)}
    for stamp in TIMESTAMPS:
        properties[stamp] = schema_ref("Timestamp")
    return {"type": "object", "properties": properties, "additionalProperties": False,
            "description": "Every attribute, unless `fields` / `fields[<type>]` chose some."}


def relationships_schema(resource: Resource) -> Schema:
    """Relation name -> related items; a BelongsTo is a one-element (or empty) array too."""
    properties = {
        relation_name: {"type": "array", "items": schema_ref(name(relation.target.name, "Related")),
                        "description": f"{relation.kind.replace('_', ' ')} {relation.target.name}"}
        for relation_name, relation in sorted(resource.relations.items())
    }
    return {"type": "object", "properties": properties, "additionalProperties": False}


def resource_schema(type_name: str, attributes_ref: Schema, relationships_ref: Schema | None,
                    meta: Schema | None) -> Schema:
    properties: Schema = {"id": {"type": "string"}, "type": {"type": "string", "const": type_name},
                          "attributes": attributes_ref}
    if relationships_ref is not None:
        properties["relationships"] = relationships_ref
    if meta is not None:
        properties["meta"] = meta
    return {"type": "object", "required": ["id", "type", "attributes"], "properties": properties,
            "additionalProperties": False}


def has_files(resource: Resource) -> bool:
    return any(describe(f).uploadable for f in fields_for(resource, "store"))


def schemas(resource: Resource) -> dict[str, Schema]:
    """Every component schema of one repository."""
    n = resource.name
    shown = fields_for(resource, "show")
    relationships = schema_ref(name(n, "Relationships")) if resource.relations else None
    out: dict[str, Schema] = {
        name(n, "Attributes"): attributes_schema(shown),
        name(n, "Resource"): resource_schema(n, schema_ref(name(n, "Attributes")), relationships,
                                             schema_ref("AuthorizationFlags")),
        name(n, "Related"): resource_schema(n, schema_ref(name(n, "Attributes")), relationships, None),
        name(n, "Page"): {
            "type": "object", "required": ["meta", "links", "data"], "additionalProperties": False,
            "properties": {"meta": schema_ref("PaginationMeta"), "links": schema_ref("PaginationLinks"),
                           "data": {"type": "array", "items": schema_ref(name(n, "Resource"))}}},
        name(n, "Document"): {"type": "object", "required": ["data"], "additionalProperties": False,
                              "properties": {"data": schema_ref(name(n, "Resource"))}},
    }
    if relationships is not None:
        out[name(n, "Relationships")] = relationships_schema(resource)
    for action in WRITE_ACTIONS:
        out[name(n, action.capitalize())] = attributes.write_body(fields_for(resource, action), action)
    if has_files(resource):
        out[name(n, "StoreForm")] = attributes.write_body(fields_for(resource, "store"), "store", form=True)
        out[name(n, "UpdateForm")] = attributes.write_body(fields_for(resource, "update"), "update", form=True)
    return out
