"""The OpenAPI document: valid 3.1 (checked by openapi-spec-validator), built from the same
declarations as the other doors, served at /api/restify/openapi.json and printed by `restify openapi`."""
import json
import os
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from service import Model, Policy, Repository, field
from service.config import Settings, load_settings
from service.core.declarations import models as model_registry
from service.core.declarations.registry import build_registry, load_app
from service.core.kernel import answers, errors
from service.openapi import build_document
from tests.conftest import ROOT
from tests.processes import RUN_WAIT

PREFIX = "/api/restify"
INT64 = 2**63 - 1


@pytest.fixture(scope="module")
def document():
    return build_document(load_app(ROOT), Settings(app_dir=ROOT))


def schema_of(document, name):
    return document["components"]["schemas"][name]


def resolve(document, schema):
    while "$ref" in schema:
        schema = schema_of(document, schema["$ref"].rsplit("/", 1)[1])
    return schema


def params(operation):
    return {p["name"]: p for p in operation.get("parameters", [])}


def test_document_is_valid_openapi_3_1(document):
    validate(document, cls=OpenAPIV31SpecValidator)
    assert document["openapi"] == "3.1.0"


def test_every_route_is_described(document):
    assert set(document["paths"]) == {
        f"{PREFIX}/{name}" for name in ("comments", "posts", "tags", "users")
    } | {f"{PREFIX}/{name}/{{id}}" for name in ("comments", "posts", "tags", "users")} | {
        f"{PREFIX}/{name}/upload" for name in ("posts", "users")  # the repositories with image fields
    } | {f"{PREFIX}/{name}/{{id}}/upload" for name in ("posts", "users")} | {
        f"{PREFIX}/{name}/bulk{action}" for name in ("comments", "posts", "tags", "users")
        for action in ("", "/update", "/delete")
    } | {
        f"{PREFIX}/profile", f"{PREFIX}/profile/upload", "/api/register", "/api/login", "/api/logout",
        "/api/forgot-password", "/api/reset-password", "/api/verify-email/resend", "/api/verify-email/{id}/{hash}",
        "/storage/{path}", f"{PREFIX}/openapi.json", "/api/tokens", "/api/tokens/{id}",
        f"{PREFIX}/comments/{{id}}/restore",  # the demo's comments have soft deletes
    } | {f"{PREFIX}/posts/{{id}}/{operation}/tags" for operation in ("attach", "detach", "sync")} | {
        f"{PREFIX}/posts/{path}" for path in (  # the demo's posts declare actions and getters
            "actions", "{id}/actions", "getters", "getters/run/{key}", "{id}/getters", "{id}/getters/{key}",
            "aggregate")}  # and group keys and a metric
    assert set(document["paths"][f"{PREFIX}/posts"]) == {"get", "post"}
    assert set(document["paths"][f"{PREFIX}/posts/{{id}}"]) == {"parameters", "get", "put", "patch", "post", "delete"}
    assert set(document["paths"][f"{PREFIX}/posts/upload"]) == {"post"}
    assert set(document["paths"][f"{PREFIX}/posts/bulk/delete"]) == {"delete", "post"}
    assert set(document["paths"][f"{PREFIX}/posts/{{id}}/upload"]) == {"parameters", "post"}
    assert set(document["paths"][f"{PREFIX}/profile"]) == {"get", "put", "post"}
    assert set(document["paths"][f"{PREFIX}/profile/upload"]) == {"post"}
    operation_ids = [op["operationId"] for item in document["paths"].values() for key, op in item.items()
                     if key != "parameters"]
    # 4 bulk each; 3 for the user's tokens; 4 for accounts by mail; a restore; the posts' aggregate
    assert len(operation_ids) == len(set(operation_ids)) == 4 * 7 + 4 * 4 + 2 * 2 + 4 + 3 + 1 + 1 + 3 + 8 + 3 + 4 + 1 + 1


def test_every_operation_has_one_request_media_type(document):
    """What client generators need: one body type per call."""
    media_types = {(path, method): list(operation["requestBody"]["content"])
                   for path, item in document["paths"].items() for method, operation in item.items()
                   if method != "parameters" and "requestBody" in operation}
    multipart = {key for key, types in media_types.items() if types == ["multipart/form-data"]}
    assert multipart == {("/api/restify/posts/upload", "post"), ("/api/restify/posts/{id}/upload", "post"),
                         ("/api/restify/users/upload", "post"), ("/api/restify/users/{id}/upload", "post"),
                         ("/api/restify/profile/upload", "post")}
    assert all(types == ["application/json"] for key, types in media_types.items() if key not in multipart)


def test_multipart_operations_take_the_form_schemas(document):
    def body(path):
        return document["paths"][path]["post"]["requestBody"]

    assert body(f"{PREFIX}/posts/upload") == {"required": True, "content": {"multipart/form-data": {
        "schema": {"$ref": "#/components/schemas/posts.StoreForm"}}}}
    assert body(f"{PREFIX}/posts/{{id}}/upload")["content"]["multipart/form-data"]["schema"] == {
        "$ref": "#/components/schemas/posts.UpdateForm"}
    assert body(f"{PREFIX}/profile/upload")["content"]["multipart/form-data"]["schema"] == {
        "$ref": "#/components/schemas/users.UpdateForm"}
    ids = {path: document["paths"][path]["post"]["operationId"] for path in (
        f"{PREFIX}/posts/upload", f"{PREFIX}/posts/{{id}}/upload", f"{PREFIX}/posts/{{id}}", f"{PREFIX}/profile",
        f"{PREFIX}/profile/upload")}
    assert list(ids.values()) == ["posts.storeUpload", "posts.upload", "posts.updateByPost", "profile.updateByPost",
                                  "profile.upload"]
    created = document["paths"][f"{PREFIX}/posts/upload"]["post"]["responses"]["201"]
    assert created == document["paths"][f"{PREFIX}/posts"]["post"]["responses"]["201"]
    tag_links = document["paths"][f"{PREFIX}/tags"]["post"]["responses"]["201"]["links"]
    assert set(tag_links) == {"ShowTags", "UpdateTags", "PatchTags", "DeleteTags"}  # no upload route to link to


def test_servers_is_set(document):
    assert document["servers"] == [{"url": "/", "description": "The server this document is served from."}]


def test_info_names_the_license_the_deployer_sets(document):
    assert document["info"]["title"] == "Restify API"
    assert document["info"]["license"] == {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"}
    settings = Settings({"openapi": {"title": "Blog", "license": "MIT", "license_url": "https://example.com/l"}},
                        app_dir=ROOT)
    info = build_document(load_app(ROOT), settings)["info"]
    assert (info["title"], info["license"]) == ("Blog", {"name": "MIT", "url": "https://example.com/l"})
    assert build_document(load_app(ROOT), Settings({"openapi": {"license": "Apache-2.0"}}, app_dir=ROOT))[
        "info"]["license"] == {"name": "Apache-2.0", "identifier": "Apache-2.0"}


def test_login_and_register_need_no_token(document):
    assert document["paths"]["/api/login"]["post"]["security"] == []
    assert document["paths"]["/api/register"]["post"]["security"] == []
    assert document["paths"]["/api/logout"]["post"]["security"] == [{"bearerAuth": []}]


def test_no_operation_lists_a_parameter_twice_nor_per_page_beside_perpage(document):
    for path, item in document["paths"].items():
        for method, operation in ((m, o) for m, o in item.items() if m != "parameters"):
            names = [(p["name"], p["in"]) for p in [*item.get("parameters", []), *operation.get("parameters", [])]]
            assert len(names) == len(set(names)), (method, path)
            assert ("per_page", "query") not in names, (method, path)  # accepted, documented as perPage


def test_index_parameters_name_the_query_contract(document):
    index = params(document["paths"][f"{PREFIX}/posts"]["get"])
    assert list(index) == ["page", "perPage", "relatablePerPage", "search", "sort", "related",
                           "include", "views", "views[ne]", "views[gt]", "views[gte]", "views[lt]", "views[lte]",
                           "views[in]", "views[nin]", "views[between]", "views[null]", "published", "published[ne]",
                           "published[null]", "user_id", "user_id[ne]", "user_id[in]", "user_id[nin]", "user_id[null]",
                           "filter", "user.name", "user.name[ne]", "user.name[in]", "user.name[nin]",
                           "user.name[null]", "has", "count", "cursor", "fields", "fields[posts]",
                           "fields[comments]", "fields[tags]", "fields[users]"]
    assert index["has"]["schema"] == {"type": "string", "pattern": "^(comments|tags)(,(comments|tags))*$"}
    assert index["user.name[in]"]["description"].startswith("Through user, as you may see it")
    assert index["published[null]"]["schema"] == {"type": "boolean"}
    assert index["user_id[in]"]["schema"] == {"type": "string"}
    assert index["filter"]["schema"] == {"type": "string", "contentMediaType": "application/json"}
    assert '`any` / `all` (lists of filter objects) and `not` (one)' in index["filter"]["description"]
    assert index["count"]["schema"] == {"type": "string", "enum": ["exact", "none"]}
    assert index["page"]["schema"] == {"type": "integer", "minimum": 1, "maximum": INT64}
    assert index["search"]["schema"] == {"type": "string", "maxLength": 255}
    assert index["published"]["schema"] == {"type": "boolean"}
    assert index["user_id"]["schema"] == {"type": "string"}
    assert index["sort"]["schema"]["pattern"] == "^(?:relevance|[-+]?(?:user\\.name|title|views|created_at|updated_at|id))" \
        "(?:,[-+]?(?:title|views|created_at|updated_at|id))*$"
    assert "'relevance' (first, without a sign, with search)" in index["sort"]["description"]
    fieldset = Draft202012Validator(index["fields[users]"]["schema"], format_checker=None)
    for good in ("name", "name,post_count,posts", ""):
        assert fieldset.is_valid(good), good
    for bad in ("password", "name,", "id"):
        assert not fieldset.is_valid(bad), bad
    assert index["fields"]["schema"] == index["fields[posts]"]["schema"]
    related = Draft202012Validator(index["related"]["schema"], format_checker=None)
    for good in ("user", "user,comments", "comments.user", "user.posts.tags", "tags,user.posts"):
        assert related.is_valid(good), good
    for bad in ("nope", "user.nope", "user,", "user.posts.user.posts", "password"):
        assert not related.is_valid(bad), bad
    assert index["include"]["schema"] == index["related"]["schema"]
    tags = params(document["paths"][f"{PREFIX}/tags"]["get"])
    assert "related" not in tags and "include" not in tags  # tags have no relations
    assert list(params(document["paths"][f"{PREFIX}/tags/{{id}}"]["get"])) == ["relatablePerPage", "fields",
                                                                              "fields[tags]"]
    users = params(document["paths"][f"{PREFIX}/users"]["get"])
    assert not [name for name in users if name.startswith("email")]  # a user's email is theirs alone: no filter


def test_store_body_of_posts_has_the_exact_constraints(document):
    assert schema_of(document, "posts.Store") == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 255, "minLength": 1, "description": "Title."},
            "body": {"type": ["string", "null"], "maxLength": 65535, "description": "Body."},
            "views": {"type": "integer", "minimum": 0, "maximum": INT64, "default": 0, "description": "Views."},
            "published": {"type": "boolean", "default": False, "description": "Published."},
        },
        "required": ["title"],
    }
    body = document["paths"][f"{PREFIX}/posts"]["post"]["requestBody"]
    assert body["required"] is True
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/posts.Store"}
    form = schema_of(document, "posts.StoreForm")
    assert form["properties"]["cover"]["format"] == "binary"
    assert form["properties"]["body"]["type"] == "string"  # a form part is never null
    assert "user_id" not in form["properties"]  # read-only and server-set: never an input


def test_put_patch_and_post_update_bodies(document):
    record = document["paths"][f"{PREFIX}/posts/{{id}}"]
    assert set(record["put"]["requestBody"]["content"]) == {"application/json"}
    assert set(record["post"]["requestBody"]["content"]) == {"application/json"}  # files: POST .../{id}/upload
    assert record["patch"]["requestBody"]["required"] is False
    assert schema_of(document, "posts.Update")["required"] == ["title"]
    assert "required" not in schema_of(document, "posts.Patch")
    assert "default" not in schema_of(document, "posts.Update")["properties"]["views"]
    assert schema_of(document, "posts.UpdateForm")["required"] == ["title"]  # images: never required on update
    assert f"{PREFIX}/tags/{{id}}/upload" not in document["paths"]  # no image field: no multipart route


def test_users_bodies_keep_passwords_write_only(document):
    store = schema_of(document, "users.Store")
    assert store["required"] == ["name", "email", "password", "password_confirmation"]
    assert store["properties"]["email"] == {"type": "string", "format": "email", "maxLength": 255, "minLength": 1,
                                            "description": "Email: must be unique."}
    password = store["properties"]["password"]
    assert password["writeOnly"] is True and password["minLength"] == 8 and password["maxLength"] == 65535
    assert store["properties"]["password_confirmation"]["writeOnly"] is True
    assert store["properties"]["bio"]["type"] == ["string", "null"] and store["properties"]["bio"]["maxLength"] == 2000
    assert schema_of(document, "users.Update")["required"] == ["name", "email"]
    assert "password" not in schema_of(document, "users.Attributes")["properties"]
    assert document["components"]["schemas"]["Register"] == {"$ref": "#/components/schemas/users.Store"}
    login = schema_of(document, "Login")
    assert login["required"] == ["email", "password"] and login["properties"]["password"]["writeOnly"] is True


def test_resource_object_and_list_envelope(document):
    resource = schema_of(document, "posts.Resource")
    assert resource["required"] == ["id", "type", "attributes"]
    assert resource["properties"]["type"] == {"type": "string", "const": "posts"}
    assert resource["properties"]["meta"] == {"$ref": "#/components/schemas/AuthorizationFlags"}
    attributes = schema_of(document, "posts.Attributes")
    assert list(attributes["properties"]) == ["title", "body", "views", "published", "user_id", "cover",
                                              "created_at", "updated_at"]
    assert attributes["properties"]["title"] == {"type": "string"}
    assert attributes["properties"]["user_id"] == {"type": ["string", "null"], "readOnly": True}
    relationships = schema_of(document, "posts.Relationships")["properties"]
    assert relationships["user"]["items"] == {"$ref": "#/components/schemas/users.Related"}
    assert relationships["comments"]["items"] == {"$ref": "#/components/schemas/comments.Related"}
    assert "meta" not in schema_of(document, "users.Related")["properties"]  # related items carry no flags
    page = schema_of(document, "posts.Page")
    assert page["required"] == ["meta", "links", "data"]
    assert schema_of(document, "PaginationMeta")["required"] == [
        "current_page", "from", "last_page", "path", "per_page", "to", "total", "next_cursor", "prev_cursor"]
    assert schema_of(document, "PaginationLinks")["properties"]["next"] == {"type": ["string", "null"]}
    token = schema_of(document, "TokenMeta")
    assert "token" in token["required"]


def test_every_error_shape_is_a_json_response(document):
    responses = document["components"]["responses"]
    expected = {"BadRequest": 400, "Unauthenticated": 401, "Forbidden": 403, "NotFound": 404,
                "PreconditionFailed": 412, "PayloadTooLarge": 413, "UriTooLong": 414, "ValidationFailed": 422,
                "TooManyRequests": 429, "ServiceUnavailable": 503}
    assert set(responses) == set(expected)
    assert responses["ValidationFailed"]["content"]["application/json"]["example"] == {
        "message": "The given data was invalid.", "errors": {"title": ["The title field is required."]}}
    assert responses["Unauthenticated"]["content"]["application/json"]["example"] == {"message": "Unauthenticated."}
    assert responses["Forbidden"]["content"]["application/json"]["example"] == {
        "message": "This action is unauthorized."}
    assert responses["NotFound"]["content"]["application/json"]["example"] == {"message": "Not found."}
    assert responses["PreconditionFailed"]["content"]["application/json"]["example"] == {
        "message": "The record was changed since you read it."}
    assert "Retry-After" in responses["TooManyRequests"]["headers"]
    store = document["paths"][f"{PREFIX}/posts"]["post"]["responses"]
    assert list(store) == ["201", "400", "401", "403", "413", "414", "422", "429", "503"]  # 429: writes are paced
    assert store["422"] == {"$ref": "#/components/responses/ValidationFailed"}
    assert "Location" in store["201"]["headers"]
    assert set(store["201"]["links"]) == {"ShowPosts", "UpdatePosts", "PatchPosts", "UploadPosts", "DeletePosts"}
    login = document["paths"]["/api/login"]["post"]["responses"]
    assert list(login) == ["200", "400", "401", "413", "414", "422", "429", "503"]
    delete = document["paths"][f"{PREFIX}/posts/{{id}}"]["delete"]["responses"]
    assert list(delete) == ["204", "400", "401", "403", "404", "412", "414", "429", "503"]
    assert "content" not in delete["204"]
    bodies = document["components"]["schemas"]
    validator = Draft202012Validator({"$ref": "#/components/schemas/ValidationError", "components": {
        "schemas": bodies}})
    assert validator.is_valid({"message": "The given data was invalid.", "errors": {"email": ["x"]}})
    assert not validator.is_valid({"message": "The given data was invalid."})


def test_the_error_responses_are_the_error_tables_entries(document):
    """One response per status the REST routes answer, named after its first entry in the error table,
    described by all of that status's entries, its example the first one's body; each route's error
    statuses refer to them. 405 has none: a path answers it to a method it does not take, which is no
    operation of the document, so no operation could refer to it."""
    entries: dict[int, list] = {}
    for error in answers.TABLE:
        if error.where == errors.API and error.status != errors.MethodNotAllowed.status:
            entries.setdefault(error.status, []).append(error)
    responses = document["components"]["responses"]
    assert set(responses) == {listed[0].__name__ for listed in entries.values()}
    for listed in entries.values():
        response = responses[listed[0].__name__]
        assert response["description"] == " ".join(error.when for error in listed)
        assert response["content"]["application/json"]["example"] == listed[0].example().body()
    for item in document["paths"].values():
        for operation in (value for value in item.values() if isinstance(value, dict) and "responses" in value):
            for status, response in operation["responses"].items():
                if int(status) >= 400:
                    assert response == {"$ref": f"#/components/responses/{entries[int(status)][0].__name__}"}


def test_bearer_security(document):
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert document["paths"][f"{PREFIX}/posts"]["get"]["security"] == [{}, {"bearerAuth": []}]
    assert document["paths"][f"{PREFIX}/profile"]["get"]["security"] == [{"bearerAuth": []}]
    assert document["paths"]["/api/logout"]["post"]["security"] == [{"bearerAuth": []}]


def test_token_guard_in_config_makes_repository_routes_require_a_token():
    settings = Settings({"routes": {"middleware": ["auth:token"]}}, app_dir=ROOT)
    document = build_document(load_app(ROOT), settings)
    assert document["paths"][f"{PREFIX}/posts"]["get"]["security"] == [{"bearerAuth": []}]


def test_settings_shape_prefixes_and_limits():
    settings = Settings({"server": {"prefix": "/v2/"}, "pagination": {"max_per_page": 50},
                         "query": {"max_search_length": 40}}, app_dir=ROOT)
    document = build_document(load_app(ROOT), settings)
    assert "/v2/posts" in document["paths"] and "/v2/openapi.json" in document["paths"]
    index = params(document["paths"]["/v2/posts"]["get"])
    assert index["search"]["schema"]["maxLength"] == 40
    assert "at most 50" in index["perPage"]["description"]
    validate(document, cls=OpenAPIV31SpecValidator)


# -- rules to keywords, on a registry written here ---------------------------------------------

@pytest.fixture
def gadgets(monkeypatch):
    monkeypatch.setattr(model_registry, "_MODELS", dict(model_registry._MODELS))

    class OpenApiGadget(Model):
        collection = "gadgets"

    class Open(Policy):
        def allow_restify(self, user):
            return True

    class GadgetRepository(Repository):
        model = OpenApiGadget

        def fields(self, request):
            return [
                field("size").rules("in:small,large").nullable(),
                field("grade").numeric().rules("between:1,5"),
                field("amount").numeric().rules("integer").matchable(),
                field("code").rules("not_in:admin,root", "min:3"),
                field("released").date().required(),
                field("site").rules("url").hidden(),
                field("secret").storing_rules("required").updating_rules("sometimes"),
                field("ready").boolean().matchable(),
            ]

    return build_registry([GadgetRepository], {OpenApiGadget: Open})


def test_rules_become_json_schema_keywords(gadgets):
    document = build_document(gadgets, Settings(app_dir=ROOT))
    validate(document, cls=OpenAPIV31SpecValidator)
    store = schema_of(document, "gadgets.Store")
    props = store["properties"]
    assert props["size"]["type"] == ["string", "null"] and props["size"]["enum"] == ["small", "large", None]
    assert props["grade"] | {"description": ""} == {"type": "number", "minimum": 1, "maximum": 5, "description": ""}
    assert props["amount"]["type"] == "integer" and props["amount"]["maximum"] == INT64
    assert props["code"]["not"] == {"enum": ["admin", "root"]} and props["code"]["minLength"] == 3
    assert props["code"]["maxLength"] == 65535
    assert props["released"]["format"] == "date" and props["released"]["minLength"] == 1
    assert "maxLength" not in props["released"]  # a date is not free text
    assert props["site"]["format"] == "uri"
    assert store["required"] == ["released", "secret"]
    assert schema_of(document, "gadgets.Update")["required"] == ["released"]
    assert "site" not in schema_of(document, "gadgets.Attributes")["properties"]  # hidden
    index = params(document["paths"][f"{PREFIX}/gadgets"]["get"])
    # `amount` is an integer to the validator, so its filter is too (it was "number" here)
    assert index["amount"]["schema"] == {"type": "integer"} and index["ready"]["schema"] == {"type": "boolean"}
    assert index["amount[between]"]["schema"]["pattern"] == "^[^,]*,[^,]*$"
    assert "ready[gt]" not in index and index["amount[gt]"]["schema"] == {"type": "integer"}
    assert "search" not in index  # nothing is searchable


def test_document_follows_a_swapped_registry(gadgets):
    from service.openapi import document_json
    settings = Settings(app_dir=ROOT)
    first = json.loads(document_json(load_app(ROOT), settings))
    second = json.loads(document_json(gadgets, settings))
    assert f"{PREFIX}/posts" in first["paths"] and f"{PREFIX}/gadgets" not in first["paths"]
    assert f"{PREFIX}/gadgets" in second["paths"] and f"{PREFIX}/posts" not in second["paths"]


# -- served and printed -----------------------------------------------------------------------------

async def test_served_document_is_the_built_one(api, restify):
    response = await api.get(f"{PREFIX}/openapi.json")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json == build_document(restify.registry, restify.settings)


async def test_served_document_follows_a_live_reload(api, restify, gadgets):
    before = (await api.get(f"{PREFIX}/openapi.json")).json
    restify.swap_registry(gadgets)
    after = (await api.get(f"{PREFIX}/openapi.json")).json
    assert f"{PREFIX}/posts" in before["paths"] and f"{PREFIX}/gadgets" not in before["paths"]
    assert f"{PREFIX}/gadgets" in after["paths"] and f"{PREFIX}/posts" not in after["paths"]


def test_cli_prints_the_same_document_without_a_database():
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESTIFY_")}
    env["MONGODB_URI"] = "mongodb://127.0.0.1:9/unreachable"  # any attempt to connect would fail or hang
    result = subprocess.run([sys.executable, "-m", "service.cli", "--app-dir", str(ROOT), "openapi"],
                            capture_output=True, text=True, timeout=RUN_WAIT, env=env, cwd="/", check=False)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    settings = load_settings(ROOT, environ=env)
    assert printed == build_document(load_app(ROOT), settings)
    validate(printed, cls=OpenAPIV31SpecValidator)


def test_writes_of_a_record_take_if_match_and_may_answer_412_and_show_answers_its_etag(document):
    record = document["paths"]["/api/restify/posts/{id}"]
    for method in ("put", "patch", "post", "delete"):
        assert [p["name"] for p in record[method]["parameters"] if p["in"] == "header"] == ["If-Match"]
        assert record[method]["responses"]["412"] == {"$ref": "#/components/responses/PreconditionFailed"}
    assert "412" in document["paths"]["/api/restify/posts/{id}/upload"]["post"]["responses"]
    assert "ETag" in record["get"]["responses"]["200"]["headers"] and "304" in record["get"]["responses"]


@pytest.mark.parametrize("operation", ["attach", "detach", "sync"])
def test_attach_detach_and_sync_take_the_relation_ids_and_if_match_and_answer_the_record(document, operation):
    item = document["paths"][f"{PREFIX}/posts/{{id}}/{operation}/tags"]
    post = item["post"]
    assert post["operationId"] == f"posts.{operation}Tags"
    assert [p["name"] for p in item["parameters"]] == ["id"]
    assert list(params(post))[:4] == ["If-Match", "related", "include", "relatablePerPage"]
    assert "fields" in params(post)  # the answer is the record as show answers it, sparse fields included
    assert post["requestBody"]["content"]["application/json"]["schema"] == {
        "type": "object", "required": ["tags"], "properties": {"tags": {
            "type": "array", "items": {"type": "string"}, "minItems": 0 if operation == "sync" else 1,
            "maxItems": 1000, "description": "Ids of tags records the user may see."}}}
    assert post["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/posts.Document"}
    assert {"400", "403", "404", "412", "413", "422"} <= set(post["responses"])
    # no BelongsToMany there (a restore, for their soft deletes, only)
    assert [path for path in document["paths"] if "/comments/{id}/" in path] == [f"{PREFIX}/comments/{{id}}/restore"]
def test_actions_and_getters_of_posts_are_described_with_their_keys_and_payloads(document):
    paths = document["paths"]
    run = paths[f"{PREFIX}/posts/actions"]["post"]
    assert run["parameters"] == [{"name": "action", "in": "query", "required": True,
                                  "schema": {"type": "string", "enum": ["publish-posts"]},
                                  "description": "The key of the action or getter (kebab case of its class name, "
                                                 "unless it says)."}]
    assert run["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/posts.ActionRun"}
    body = document["components"]["schemas"]["posts.ActionRun"]
    assert list(body["properties"]) == ["repositories", "views"]
    assert body["properties"]["views"]["description"] == "publish-posts: Views."
    assert [p["name"] for p in paths[f"{PREFIX}/posts/{{id}}/actions"]["post"]["parameters"]] == ["action", "If-Match"]
    assert set(paths[f"{PREFIX}/posts/{{id}}/actions"]["post"]["responses"]) >= {"200", "403", "404", "412", "422"}
    assert paths[f"{PREFIX}/posts/getters/run/{{key}}"]["parameters"][0]["schema"] == {"type": "string",
                                                                                    "enum": ["post-stats"]}
    assert paths[f"{PREFIX}/posts/getters/run/{{key}}"]["get"]["responses"]["200"]["content"]["application/json"] == {
        "schema": {"$ref": "#/components/schemas/GetterResult"}}
    assert f"{PREFIX}/comments/actions" not in paths  # comments declare none
