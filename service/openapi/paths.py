"""Path items: the repository routes, the profile, register/login/logout, stored files
and the document itself (the routes `service.console.application` composes)."""
from typing import Any

from service.config import Settings
from service.core.declarations.context import Context
from service.core.declarations.registry import Registry, Resource
from service.core.describing.schemas import write_body
from service.core.kernel.naming import pascal
from service.core.operations import attaching
from service.core.operations.profile import _fallback_fields as profile_fallback_fields
from service.core.writing.uploads import CONTENT_TYPES
from service.openapi import parameters, resources
from service.openapi.components import JSON, error_responses, json_content, paced, schema_ref

Schema = dict[str, Any]
OPTIONAL_TOKEN: list[Schema] = [{}, {"bearerAuth": []}]
TOKEN: list[Schema] = [{"bearerAuth": []}]
NO_TOKEN: list[Schema] = []  # register and login: how a client gets its token
MULTIPART = "multipart/form-data"


def _prefix(settings: Settings, key: str, section: str = "server") -> str:
    return str(settings.get(section, key)).rstrip("/")


def _operation(operation_id: str, tag: str, summary: str, responses: dict[str, Schema],
               security: list[Schema], **extra: Any) -> Schema:
    return {"operationId": operation_id, "tags": [tag], "summary": summary, **extra,
            "security": security, "responses": responses}


def _ok(description: str, schema: Schema, status: int = 200, **extra: Any) -> dict[str, Schema]:
    return {str(status): {"description": description, "content": json_content(schema), **extra}}


def _body(schema: Schema, required: bool = True, media_type: str = JSON) -> Schema:
    """One media type per operation: generated clients take one body type per call."""
    return {"required": required, "content": {media_type: {"schema": schema}}}


# Optimistic concurrency: show's ETag is the record's version; writes take it back in If-Match.
_IF_MATCH = {"name": "If-Match", "in": "header", "required": False, "schema": {"type": "string"},
             "description": 'The ETag (version) read, e.g. "3": the write happens only if the record is still at '
                            "that version (strong comparison; `*` means any), else 412. Without it the write "
                            "proceeds."}
_ETAG = {"ETag": {"description": 'The record\'s version, "<meta.version>" (absent when relations are included).',
                  "schema": {"type": "string"}}}
_NOT_MODIFIED = {"304": {"description": "Not modified (If-None-Match matched the version ETag)."}}


def _links(resource_name: str, pointer: str, forms: bool) -> dict[str, Schema]:
    """Follow-up operations on the record a response returned (used by stateful fuzzing too)."""
    targets = {"show": "Show", "update": "Update", "patch": "Patch", "upload": "Upload", "delete": "Delete"}
    return {f"{label}{resource_name.title().replace('_', '')}": {
        "operationId": f"{resource_name}.{action}", "parameters": {"id": f"$response.body#{pointer}"}}
        for action, label in targets.items() if forms or action != "upload"}


# -- repositories -------------------------------------------------------------------------------

def repository_paths(resource: Resource, settings: Settings) -> dict[str, Schema]:
    """Collection and record routes; with file fields, the multipart writes on their own paths
    (`<r>/upload`, `<r>/{id}/upload`). POST `<r>` and `<r>/{id}` still read multipart too, for
    existing clients, but are documented as JSON: one media type per operation."""
    n = resource.name
    security = TOKEN if settings.requires_user else OPTIONAL_TOKEN
    forms = resources.has_files(resource)

    def ref(part: str) -> Schema:
        return schema_ref(resources.name(n, part))

    # 429: each user's writes are paced (service/core/identity/pacing.py); a password waits in the hashing lane.
    writes = paced(settings)
    hashing = (*writes, *((429,) if resources.hashes_passwords(resource, "update") else ()))
    store_hashing = (*writes, *((429,) if resources.hashes_passwords(resource, "store") else ()))

    def changed() -> dict[str, Schema]:
        return {**_ok("The changed record.", ref("Document")),
                **error_responses(400, 403, 404, 412, 413, 422, *hashing)}

    def created() -> dict[str, Schema]:
        return {"201": {"description": "Created.", "content": json_content(ref("Document")),
                        "headers": {"Location": {"description": "The new record's URL.", "schema": {"type": "string"}}},
                        "links": _links(n, "/data/id", forms)},
                **error_responses(400, 403, 413, 422, *store_hashing)}

    collection = {
        "get": _operation(
            f"{n}.index", n, f"List {n}",
            # 429: an expensive query (service/core/reading/admission.py) while its turns are taken.
            {**_ok(f"A page of {n} the user may see.", ref("Page")), **error_responses(400, 403, 429)}, security,
            parameters=parameters.index_parameters(resource, resources.fields_for(resource, "index"), settings)),
        "post": _operation(f"{n}.store", n, f"Create a {n} record", created(), security,
                           requestBody=_body(ref("Store"))),
    }
    record: Schema = {
        "parameters": [parameters.id_parameter(n)],
        "get": _operation(f"{n}.show", n, f"Show a {n} record",
                          {**_ok("The record.", ref("Document"), headers=_ETAG), **_NOT_MODIFIED,
                           **error_responses(400, 403, 404)}, security,
                          parameters=parameters.show_parameters(resource, settings)),
        "put": _operation(f"{n}.update", n, f"Replace a {n} record's attributes (every field is validated)",
                          changed(), security, requestBody=_body(ref("Update")), parameters=[_IF_MATCH]),
        "patch": _operation(f"{n}.patch", n, f"Change some of a {n} record's attributes (only those sent)",
                            changed(), security, requestBody=_body(ref("Patch"), required=False),
                            parameters=[_IF_MATCH]),
        "post": _operation(f"{n}.updateByPost", n, "As PUT, for clients that send POST"
                           + (" (files: POST .../{id}/upload)" if forms else ""), changed(), security,
                           requestBody=_body(ref("Update")), parameters=[_IF_MATCH]),
        "delete": _operation(f"{n}.delete", n, f"{'Trash' if resource.soft_deletes else 'Delete'} a {n} record",
                             {"204": {"description": "Deleted; no body."},
                              **error_responses(400, 403, 404, 412, *writes)},
                             security, parameters=[_IF_MATCH, *parameters.force_parameters(resource)]),
    }
    prefix = _prefix(settings, "prefix")
    path_items = {f"{prefix}/{n}": collection, f"{prefix}/{n}/{{id}}": record,
                  **_bulk_paths(n, f"{prefix}/{n}", security, store_hashing, hashing, writes)}
    if resource.soft_deletes:
        path_items[f"{prefix}/{n}/{{id}}/restore"] = {
            "parameters": [parameters.id_parameter(n)],
            "post": _operation(f"{n}.restore", n, f"Restore a trashed {n} record",
                               {**_ok("The restored record.", ref("Document")),
                                **error_responses(400, 403, 404, 412, *writes)},
                               security, parameters=[_IF_MATCH])}
    if forms:
        path_items[f"{prefix}/{n}/upload"] = {"post": _operation(
            f"{n}.storeUpload", n, f"Create a {n} record with files (multipart/form-data)", created(), security,
            requestBody=_body(ref("StoreForm"), media_type=MULTIPART))}
        path_items[f"{prefix}/{n}/{{id}}/upload"] = {
            "parameters": [parameters.id_parameter(n)],
            "post": _operation(f"{n}.upload", n, "As PUT, with files (multipart/form-data)", changed(), security,
                               requestBody=_body(ref("UpdateForm"), media_type=MULTIPART), parameters=[_IF_MATCH])}
    return path_items


def relation_change_paths(resource: Resource, settings: Settings) -> dict[str, Schema]:
    """`POST <r>/{id>/attach|detach|sync/<relation>` for each BelongsToMany relation, with its own
    body (`{"<relation>": [ids]}`), answered as show with `related=<relation>`."""
    n = resource.name
    security = TOKEN if settings.requires_user else OPTIONAL_TOKEN
    most = int(settings.get("attach", "max_ids"))
    path_items: dict[str, Schema] = {}
    for relation_name, relation in sorted(attaching.many_relations(resource).items()):
        for operation in attaching.OPERATIONS:
            ids = {"type": "array", "items": {"type": "string"}, "minItems": 0 if operation == "sync" else 1,
                   "maxItems": most, "description": f"Ids of {relation.target.name} records the user may see."}
            body = {"type": "object", "required": [relation_name], "properties": {relation_name: ids}}
            path_items[f"{_prefix(settings, 'prefix')}/{n}/{{id}}/{operation}/{relation_name}"] = {
                "parameters": [parameters.id_parameter(n)],
                "post": _operation(
                    f"{n}.{operation}{pascal(relation_name)}", n,
                    f"{operation.title()} {relation_name} of a {n} record",
                    {**_ok(f"The record with relationships.{relation_name}.",
                           schema_ref(resources.name(n, "Document"))),
                     **error_responses(400, 403, 404, 412, 413, 422, *paced(settings))},
                    security, requestBody=_body(body), parameters=[_IF_MATCH, *parameters.show_parameters(resource,
                                                                                                           settings)])}
    return path_items


def _bulk_paths(n: str, collection: str, security: list[Schema], store_hashing: tuple[int, ...],
                hashing: tuple[int, ...], writes: tuple[int, ...]) -> dict[str, Schema]:
    """`<r>/bulk`, `<r>/bulk/update`, `<r>/bulk/delete` (DELETE, and POST for clients that send no body
    with DELETE): all or nothing; the schemas are service.openapi.bulk's."""
    def ref(part: str) -> Schema:
        return schema_ref(resources.name(n, part))

    deleted = {"204": {"description": "Every record deleted; no body."},
               **error_responses(400, 403, 412, 413, 422, *writes)}

    def delete(operation_id: str, summary: str) -> Schema:
        return _operation(operation_id, n, summary, deleted, security, requestBody=_body(ref("BulkDelete")))

    return {
        f"{collection}/bulk": {"post": _operation(
            f"{n}.storeBulk", n, f"Create several {n} records, all or none",
            {**_ok("The new records, in the order sent.", ref("List"), status=201),
             **error_responses(400, 403, 413, 422, *store_hashing)}, security, requestBody=_body(ref("BulkStore")))},
        f"{collection}/bulk/update": {"post": _operation(
            f"{n}.updateBulk", n, f"Change several {n} records (PATCH each), all or none",
            {**_ok("The changed records, in the order sent.", ref("List")),
             **error_responses(400, 403, 412, 413, 422, *hashing)}, security, requestBody=_body(ref("BulkUpdate")))},
        f"{collection}/bulk/delete": {
            "delete": delete(f"{n}.deleteBulk", f"Delete several {n} records, all or none"),
            "post": delete(f"{n}.deleteBulkByPost", "As DELETE, for clients that send no body with DELETE")},
    }


# -- profile and auth -----------------------------------------------------------------------------

def profile_resource(registry: Registry, settings: Settings) -> Resource | None:
    """The user repository when it serves the profile (`can_use_for_profile`), else None."""
    users = registry.get(settings.get("auth", "user_repository"))
    if users is not None and type(users.repository).can_use_for_profile(Context(door="rest", action="profile")):
        return users
    return None


def profile_schemas(registry: Registry, settings: Settings) -> dict[str, Schema]:
    users = profile_resource(registry, settings)
    if users is not None:
        n = users.name
        relationships = schema_ref(resources.name(n, "Relationships")) if users.relations else None
        return {"Profile": resources.resource_schema(n, schema_ref(resources.name(n, "Attributes")), relationships,
                                                     schema_ref("AuthorizationFlags")),
                "ProfileUpdate": schema_ref(resources.name(n, "Update"))}
    fields = profile_fallback_fields()
    type_name = str(settings.get("auth", "user_repository"))
    return {"Profile": resources.resource_schema(type_name, resources.attributes_schema(fields), None, None),
            "ProfileUpdate": write_body(fields, "update")}


def profile_paths(registry: Registry, settings: Settings) -> dict[str, Schema]:
    """GET, PUT and POST (as PUT, JSON) on the profile; with image fields, the multipart POST on
    `profile/upload` (POST `profile` still reads multipart too, for existing clients)."""
    users = profile_resource(registry, settings)

    def changed() -> dict[str, Schema]:
        # 429: a password change or `current_password` check waits in the hashing lane, and counts as a login.
        return {**_ok("The user, changed.", schema_ref("Profile")), **error_responses(400, 413, 422, 429)}

    show_parameters = parameters.show_parameters(users, settings) if users is not None else []
    path = f"{_prefix(settings, 'prefix')}/profile"
    path_items = {path: {
        "get": _operation("profile.show", "profile", "The logged-in user, unwrapped",
                          {**_ok("The user (with `relationships` when asked for).", schema_ref("Profile")),
                           **error_responses(400)},
                          TOKEN, parameters=show_parameters),
        "put": _operation("profile.update", "profile", "Change the logged-in user (JSON; PUT rules: required "
                          "fields must be sent)", changed(), TOKEN, requestBody=_body(schema_ref("ProfileUpdate"))),
        "post": _operation("profile.updateByPost", "profile", "As PUT, for clients that send POST", changed(),
                           TOKEN, requestBody=_body(schema_ref("ProfileUpdate"))),
    }}
    if users is not None and resources.has_files(users):
        path_items[f"{path}/upload"] = {"post": _operation(
            "profile.upload", "profile", "As PUT, with files (multipart/form-data; image fields are stored, "
            "the attribute holds /storage/<dir>/<file>)", changed(), TOKEN,
            requestBody=_body(schema_ref(resources.name(users.name, "UpdateForm")), media_type=MULTIPART))}
    return path_items


def auth_schemas(registry: Registry, settings: Settings) -> dict[str, Schema]:
    users = registry.get(settings.get("auth", "user_repository"))
    logout = {"Logout": {"type": "object", "properties": {"all": {
        "type": "boolean", "default": False, "description": "Revoke every token of the user, not just this one."}}}}
    login = {"type": "object", "required": ["email", "password"], "properties": {
        "email": {"type": "string", "minLength": 1},
        "password": {"type": "string", "minLength": 1, "writeOnly": True}}}
    if users is None:  # register and login answer 400: the application has no user repository
        return {"Register": {"type": "object"}, "Login": login, **logout,
                "AuthenticatedUser": resources.resource_schema(str(settings.get("auth", "user_repository")),
                                                               {"type": "object"}, None, schema_ref("TokenMeta"))}
    return {"Register": schema_ref(resources.name(users.name, "Store")), "Login": login, **logout,
            "AuthenticatedUser": resources.resource_schema(users.name, schema_ref(resources.name(users.name,
                                                                                                 "Attributes")),
                                                           None, schema_ref("TokenMeta"))}


def auth_paths(settings: Settings) -> dict[str, Schema]:
    prefix = _prefix(settings, "auth_prefix")

    def user(description: str, status: int) -> dict[str, Schema]:
        return _ok(description, schema_ref("AuthenticatedUser"), status)

    return {
        f"{prefix}/register": {"post": _operation(
            "auth.register", "auth", "Create an account through the user repository's fields and rules (rate limited)",
            {**user("The new user, unwrapped, with `meta.token`.", 201), **error_responses(400, 413, 422, 429)},
            NO_TOKEN, requestBody=_body(schema_ref("Register")))},
        f"{prefix}/login": {"post": _operation(
            "auth.login", "auth", "Exchange an email and password for a bearer token (rate limited)",
            {**user("The user, unwrapped, with `meta.token`.", 200), **error_responses(400, 413, 422, 429)},
            NO_TOKEN, requestBody=_body(schema_ref("Login")))},
        f"{prefix}/logout": {"post": _operation(
            "auth.logout", "auth", "Revoke the token this request carries (with {\"all\": true}: every token of "
            "the user)", {"204": {"description": "Revoked; no body."}, **error_responses(400, 422)}, TOKEN,
            requestBody=_body(schema_ref("Logout"), required=False))},
    }


# -- files and the document -----------------------------------------------------------------------

def file_paths(settings: Settings) -> dict[str, Schema]:
    binary = {"type": "string", "format": "binary"}
    types = [*CONTENT_TYPES.values(), "application/octet-stream"]
    return {f"{_prefix(settings, 'url_prefix', 'files')}/{{path}}": {"get": _operation(
        "files.show", "files", "A stored file (local disk or GridFS), typed by its bytes",
        {"200": {"description": "The file; anything that is not an image is sent as a download.",
                 "content": {media: {"schema": binary} for media in types}},
         "304": {"description": "Not modified (If-None-Match matched the ETag)."},
         **error_responses(404)},
        OPTIONAL_TOKEN, parameters=[{"name": "path", "in": "path", "required": True, "schema": {"type": "string"},
                                     "description": "<dir>/<file>, as stored in an image attribute."}])}}


def document_path(settings: Settings) -> dict[str, Schema]:
    return {f"{_prefix(settings, 'prefix')}/openapi.json": {"get": _operation(
        "openapi.show", "meta", "This document",
        {**_ok("The OpenAPI 3.1 document.", {"type": "object"}), **error_responses()}, OPTIONAL_TOKEN)}}
