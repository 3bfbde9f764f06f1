"""tools/list: which tools the demo app offers, and their JSON Schemas derived from fields and rules."""
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from service import Model, Policy, Repository, field, model
from service.core.declarations.registry import build_registry, load_app
from service.core.describing.parameters import count_schema, cursor_schema
from service.core.kernel.errors import DeclarationError
from service.mcp.schemas import filter_object_schema
from tests.conftest import ROOT

DEMO_TOOLS = [
    "comments-delete-tool", "comments-index-tool", "comments-restore-tool", "comments-show-tool", "comments-store-tool",
    "comments-update-tool",
    "posts-aggregate-tool", "posts-attach-tool", "posts-bulk-store-tool", "posts-delete-tool", "posts-detach-tool", "posts-index-tool",
    "posts-post-stats-getter-tool", "posts-publish-posts-action-tool", "posts-show-tool", "posts-store-tool",
    "posts-sync-tool", "posts-update-tool",
    "tags-index-tool", "tags-show-tool", "tags-store-tool",
    "tokens-list-tool", "tokens-revoke-tool",  # the caller's own tokens
    "users-index-tool", "users-profile-tool", "users-show-tool",
]
_PATHS = ("comments|comments\\.post|comments\\.post\\.comments|comments\\.post\\.tags|comments\\.post\\.user|"
          "comments\\.user|comments\\.user\\.posts|tags|user|user\\.posts|user\\.posts\\.comments|user\\.posts\\.tags|"
          "user\\.posts\\.user")
INCLUDE_PATTERN = f"^(?:{_PATHS})(?:,(?:{_PATHS}))*$"
INCLUDE_POSTS = ("Comma-separated relations to load into `relationships`: comments, tags, user. Dotted paths load "
                 "nested ones (e.g. comments.post), at most 3 levels. An unknown or too deep path is a 400.")


POST_NAMES = ["title", "body", "views", "published", "user_id", "cover", "created_at", "updated_at", "comments",
              "tags", "user"]


def _names(items):
    return {"type": "array", "items": {"type": "string", "enum": items}, "uniqueItems": True}


FIELDS_POSTS = {
    "anyOf": [_names(POST_NAMES), {"type": "object", "additionalProperties": False, "properties": {
        "posts": _names(POST_NAMES),
        "comments": _names(["body", "post_id", "user_id", "deleted_at", "created_at", "updated_at", "post", "user"]),
        "tags": _names(["name", "created_at", "updated_at"]),
        "users": _names(["name", "bio", "avatar", "post_count", "created_at", "updated_at", "posts"]),
    }}],
    "description": "A list of posts names, or an object of such lists per type (posts, comments, tags, users). "
                   "Sparse fieldsets: only these attributes and relations come back (id, type and meta always do); "
                   "a relation listed here is not loaded by it (use include). An unknown or hidden name is a 400.",
}


async def tools_of(connect, token: str) -> dict:
    async with connect(token) as session:
        return {tool.name: tool for tool in (await session.list_tools()).tools}


async def test_initialize_names_the_server_and_offers_tools(mcp_url, ann):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {ann['token']}"}) as http, \
            streamable_http_client(mcp_url, http_client=http) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
        await session.send_ping()
    assert result.server_info.name == "restify"
    assert result.capabilities.tools is not None
    assert "same policies" in result.instructions


async def test_demo_app_offers_exactly_the_enabled_operations(connect, ann):
    assert sorted(await tools_of(connect, ann["token"])) == DEMO_TOOLS


async def test_index_tool_schema_has_paging_search_sort_include_and_matchable_filters(connect, ann):
    tool = (await tools_of(connect, ann["token"]))["posts-index-tool"]
    fields = load_app(ROOT).resources["posts"].fields(None)
    assert tool.input_schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "page": {"type": "integer", "minimum": 1, "default": 1, "description": "The page to return, from 1."},
            "perPage": {"type": "integer", "minimum": 1, "description": "Records per page (default 15)."},
            "search": {"type": "string", "maxLength": 255,
                       "description": "Case-insensitive text searched in: title, user.name. Where the database "
                                      "searches text indexes (MongoDB), title is searched by word rather than by "
                                      "substring."},
            "sort": {"type": "string",
                     "pattern": "^(?:relevance|[-+]?(?:user\\.name|title|views|created_at|updated_at|id))"
                     "(?:,[-+]?(?:title|views|created_at|updated_at|id))*$",
                     "description": "Comma-separated fields to sort by, '-' first for descending (e.g. '-created_at', "
                                    "newest first); sortable: title, views, created_at, updated_at, id. Ties are broken by id; any other field is a 400. "
                                    "A related field (user.name) may come first: records in the order of their "
                                    "related record, those without a visible one last; with page, not cursor. "
                                    "'relevance' (first, without a sign, with search) lists the most relevant records "
                                    "first where the database ranks text (MongoDB; a 400 on the embedded server); "
                                    "with page, not cursor."},
            "include": {"type": "string", "pattern": INCLUDE_PATTERN, "description": INCLUDE_POSTS},
            "fields": FIELDS_POSTS,
            "cursor": cursor_schema(),
            "count": count_schema(),
            "filter": filter_object_schema([f for f in fields if f.is_matchable], load_app(ROOT).resources["posts"]),
            "published": {"type": ["boolean", "null"], "description": "Only records whose published equals this "
                                                                      "value exactly (null: records without one)."},
            "user_id": {"type": ["string", "null"], "description": "Only records whose user_id equals this value "
                                                                  "exactly (null: records without one)."},
            "views": {"type": ["integer", "null"], "description": "Only records whose views equals this value "
                                                                  "exactly (null: records without one)."},
        },
    }
    assert tool.annotations.read_only_hint is True


async def test_index_tool_and_openapi_share_sort_include_per_page_and_search(connect, ann):
    """Built once in core: the tool's argument is the OpenAPI parameter's schema with its text (the
    include pattern was missing from the tool, the texts differed)."""
    from service.config import Settings
    from service.openapi import build_document
    properties = (await tools_of(connect, ann["token"]))["posts-index-tool"].input_schema["properties"]
    document = build_document(load_app(ROOT), Settings(app_dir=ROOT))
    parameters = {p["name"]: p for p in document["paths"]["/api/restify/posts"]["get"]["parameters"]}
    for tool_name, parameter_name in (("sort", "sort"), ("include", "related"), ("search", "search")):
        assert properties[tool_name] == {**parameters[parameter_name]["schema"],
                                         "description": parameters[parameter_name]["description"]}, tool_name
    assert properties["perPage"]["description"] == parameters["perPage"]["description"]


async def test_store_tool_schema_has_types_required_defaults_and_max_lengths(connect, ann):
    tools = await tools_of(connect, ann["token"])
    assert tools["posts-store-tool"].input_schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 255, "description": "Title."},
            "body": {"type": ["string", "null"], "maxLength": 65535, "description": "Body."},
            "views": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1, "default": 0, "description": "Views."},
            "published": {"type": "boolean", "default": False, "description": "Published."},
        },
        "required": ["title"],
    }
    assert tools["comments-store-tool"].input_schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "body": {"type": "string", "minLength": 1, "maxLength": 5000, "description": "Body."},
            "post_id": {"type": "string", "minLength": 1, "maxLength": 65535,
                        "description": "Post id: the id of an existing posts record."},
        },
        "required": ["body", "post_id"],
    }
    assert tools["tags-store-tool"].input_schema["properties"]["name"] == {
        "type": "string", "minLength": 1, "maxLength": 50, "description": "Name: must be unique."}


async def test_update_tool_takes_an_id_and_any_attributes(connect, ann):
    schema = (await tools_of(connect, ann["token"]))["posts-update-tool"].input_schema
    assert schema["required"] == ["id"]
    assert list(schema["properties"]) == ["id", "title", "body", "views", "published", "version"]
    assert "default" not in schema["properties"]["views"]  # defaults only fill a new record
    assert schema["properties"]["version"]["type"] == "integer"  # the version read, checked on write


@pytest.mark.parametrize("name, properties, required", [
    ("posts-show-tool", ["id", "include", "fields"], ["id"]),
    ("posts-delete-tool", ["id", "version", "confirm"], ["id"]),
    ("tags-show-tool", ["id", "fields"], ["id"]),  # tags have no relations to include
    ("users-profile-tool", ["include", "fields"], None),
])
async def test_id_and_include_tools(connect, ann, name, properties, required):
    schema = (await tools_of(connect, ann["token"]))[name].input_schema
    assert list(schema["properties"]) == properties
    assert schema.get("required") == required


async def test_descriptions_say_what_comes_back_and_what_can_be_included(connect, ann):
    tools = await tools_of(connect, ann["token"])
    index = tools["posts-index-tool"].description
    assert ('"meta": {"current_page", "from", "last_page", "path", "per_page", "to", "total", "next_cursor", '
            '"prev_cursor"}') in index
    assert '"attributes": {"title", "body", "views", "published", "user_id", "cover", "created_at", "updated_at"}' \
        in index
    assert "Relations you can include: comments, tags, user." in index
    assert "Exact filters: views, published, user_id." in index
    assert 'Returns {"data": {"id", "type": "posts"' in tools["posts-show-tool"].description
    assert "Set by the server: user_id." in tools["posts-store-tool"].description
    assert "Files (cover) cannot be sent here" in tools["posts-store-tool"].description
    assert "only the attributes you send" in tools["posts-update-tool"].description
    assert 'Returns {"deleted": true, "id": "<id>"}' in tools["posts-delete-tool"].description
    assert "Relations you can include: posts." in tools["users-profile-tool"].description
    assert all('isError true' in tool.description for tool in tools.values())


@pytest.mark.parametrize("config", [{"pagination": {"max_per_page": 5}}], indirect=True)
async def test_per_page_description_names_the_cap(connect, ann):
    schema = (await tools_of(connect, ann["token"]))["posts-index-tool"].input_schema
    assert schema["properties"]["perPage"]["description"] == "Records per page (default 5; at most 5, a larger " \
                                                             "value is clamped)."


# -- a repository with every kind of rule -------------------------------------------------------------
class Applicant(Model):
    pass


class ApplicantPolicy(Policy):
    def allow_restify(self, user):
        return True

    def store(self, user):
        return True


@model(Applicant)
class ApplicantRepository(Repository):
    mcp = ("store",)

    def fields(self, request):
        return [
            field("status").rules("in:draft,sent").default("draft"),
            field("grade").numeric().rules("in:1,2,3"),
            field("email").required().rules("email", "max:120", "unique:applicants,email"),
            field("site").nullable().rules("url"),
            field("age").rules("integer", "between:18,99"),
            field("score").numeric().rules("min:0.5"),
            field("code").rules("alpha_dash", "not_in:admin,root", "min:3"),
            field("born").date(),
            field("active").boolean(),
            field("secret").password().storing_rules("required", "min:8", "confirmed"),
            field("owner_id").readonly(),
            field("note").hidden(),
        ]


class TestEveryRule:
    @pytest.fixture
    def registry(self):
        base = load_app(ROOT)
        from repositories.policies import POLICIES  # the copy load_app has just imported
        repositories = [type(resource.repository) for resource in base.resources.values()]
        return build_registry(repositories + [ApplicantRepository], {**POLICIES, Applicant: ApplicantPolicy})

    async def test_rules_become_json_schema_keywords(self, connect, ann):
        schema = (await tools_of(connect, ann["token"]))["applicants-store-tool"].input_schema
        assert schema == {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "status": {"type": "string", "enum": ["draft", "sent"], "default": "draft", "maxLength": 65535,
                           "description": "Status."},
                "grade": {"type": "number", "enum": [1, 2, 3], "description": "Grade."},
                "email": {"type": "string", "format": "email", "minLength": 1, "maxLength": 120,
                          "description": "Email: must be unique."},
                "site": {"type": ["string", "null"], "format": "uri", "maxLength": 65535, "description": "Site."},
                "age": {"type": "integer", "minimum": 18, "maximum": 99, "description": "Age."},
                "score": {"type": "number", "minimum": 0.5, "description": "Score."},
                "code": {"type": "string", "not": {"enum": ["admin", "root"]}, "minLength": 3, "maxLength": 65535,
                         "description": "Code: letters, digits, dashes and underscores only."},
                "born": {"type": "string", "format": "date",
                         "description": "Born: an ISO 8601 date (a date-time is accepted too)."},
                "active": {"type": "boolean", "description": "Active."},
                "note": {"type": "string", "maxLength": 65535, "description": "Note."},
                "secret": {"type": "string", "minLength": 8, "maxLength": 65535, "writeOnly": True,
                           "description": "Secret: send the same value again as secret_confirmation; "
                                          "write-only, never returned."},
                "secret_confirmation": {"type": "string", "writeOnly": True,
                                        "description": "The secret again, to confirm it."},
            },
            "required": ["email", "secret", "secret_confirmation"],
        }

    async def test_a_store_only_repository_offers_only_its_store_tool(self, connect, ann):
        names = sorted(await tools_of(connect, ann["token"]))
        assert names == sorted(DEMO_TOOLS + ["applicants-store-tool"])


@pytest.mark.parametrize("declared, operations", [
    (True, ("index", "show")), (False, ()), (("delete", "index"), ("index", "delete")),
    (["store"], ("store",)), ("show", ("show",)),
])
def test_capability_switch_reads_true_false_or_operations(declared, operations):
    repository = type("ThingRepository", (Repository,), {"mcp": declared})
    assert repository.mcp_operations() == operations


def test_unknown_operation_fails_when_the_repository_is_declared():
    with pytest.raises(DeclarationError, match="WrongRepository.mcp names unknown operations destroy"):
        type("WrongRepository", (Repository,), {"mcp": ("index", "destroy")})
    with pytest.raises(DeclarationError, match=r"WorseRepository.mcp = 3: use True, False or a tuple"):
        type("WorseRepository", (Repository,), {"mcp": 3})
