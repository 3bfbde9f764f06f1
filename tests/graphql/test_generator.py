"""The GraphQL schema generator: the SDL it writes for the
demo app, type by type, its typed defaults and the graphql.toml that changes them, repository
include/exclude, schema options, and byte-identical, round-trippable output.
"""
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from graphql import build_schema, print_schema

from service.core.declarations.registry import Registry, load_app
from service.core.kernel.errors import DeclarationError
from service.graphql.config import GraphQLConfig, load_graphql_config
from service.graphql.generator import render

ROOT = Path(__file__).resolve().parents[2]
TYPES = {"comments": "Comment", "posts": "Post", "tags": "Tag", "users": "User"}

# One line per member, as the SDL prints them (sorted): id, the visible fields, the timestamps, the version.
SCALAR_MEMBERS = {
    "Comment": ["body: String", "created_at: String", "deleted_at: String", "id: ID!", "post_id: String",
                "updated_at: String", "user_id: String", "version: Int"],
    "Post": ["body: String", "cover: String", "created_at: String", "id: ID!", "published: Boolean",
             "title: String", "updated_at: String", "user_id: String", "version: Int", "views: Long"],
    "Tag": ["created_at: String", "id: ID!", "name: String", "updated_at: String", "version: Int"],
    "User": ["avatar: String", "bio: String", "created_at: String", "email: String", "id: ID!", "name: String",
             "post_count: Long", "updated_at: String", "version: Int"],
}
RELATION_MEMBERS = {
    "Comment": ["post: Post", "user: User"],
    "Post": ["comments(first: Int = 15): [Comment!]!", "tags(first: Int = 15): [Tag!]!", "user: User"],
    "Tag": [],
    "User": ["posts(first: Int = 15): [Post!]!"],
}
# Writable fields only: no id, timestamps, readonly or value() fields (user_id), or images (cover, avatar).
INPUT_MEMBERS = {
    "Comment": ["body: String", "post_id: String"],
    "Post": ["body: String", "published: Boolean", "title: String", "views: Long"],
    "Tag": ["name: String"],
    "User": ["bio: String", "current_password: String", "email: String", "name: String", "password: String",
             "password_confirmation: String"],
}
# The demo's posts declare actions and getters (repositories/post_actions.py); their fields answer JSON.
EXTENSION_QUERIES = {"Post": ["postGetter(id: ID, key: String!): JSON",
                              # aggregations: posts declare group keys and a metric (graphql/aggregating.py)
                              "postAggregate(filter: PostFilter, group: String, metrics: String, search: String, "
                              "sort: String): PostAggregation!"]}
EXTENSION_MUTATIONS = {
    "Post": ["runPostAction(action: String!, all: Boolean, filter: PostFilter, id: ID, ids: [ID!], payload: JSON, "
             "search: String, version: Int): JSON"]}
JSON_SDL = ('"""\nAny JSON value (an object, a list, a string, a number, a boolean or null), as it is.\n"""\n'
            "scalar JSON")
# The scalar of Post.views (an integer field without a 32-bit bound), as the SDL prints it.
LONG_SDL = ('"""\nA signed 64-bit integer, written in JSON as a string of digits; input also takes an integer.\n"""\n'
            "scalar Long")

# The shared types of index queries, as the SDL prints them.
BOOLEAN_FILTER_SDL = (
    '"""\nOperators on a Boolean field, combined with AND (eq, ne, isNull): eq null means no value, ne null any value; '
    'isNull true finds records without one.\n"""\ninput BooleanFilter {\n  eq: Boolean\n  isNull: Boolean\n  ne: Boolean\n}')
STRING_FILTER_SDL = (
    '"""\nOperators on a String field, combined with AND (eq, ne, in, nin, isNull): eq null means no value, ne null any '
    'value; isNull true finds records without one.\n"""\ninput StringFilter {\n  eq: String\n  in: [String!]\n'
    '  isNull: Boolean\n  ne: String\n  nin: [String!]\n}')
LONG_FILTER_SDL = (
    '"""\nOperators on a Long field, combined with AND (eq, ne, gt, gte, lt, lte, in, nin, between, isNull): eq null '
    'means no value, ne null any value; between takes [low, high], both included; isNull true finds records without '
    'one.\n"""\ninput LongFilter {\n' + "".join(f"  {m}\n" for m in (
        "between: [Long!]", "eq: Long", "gt: Long", "gte: Long", "in: [Long!]", "isNull: Boolean", "lt: Long",
        "lte: Long", "ne: Long", "nin: [Long!]")) + "}")
COUNT_SDL = ('"""\nEXACT counts the matching records (meta.total, meta.lastPage); NONE leaves them null, for lists where '
             'a count costs too much.\n"""\nenum Count {\n  EXACT\n  NONE\n}')
PAGE_META_SDL = ('"""\nWhere a page is: the REST index\'s meta. Pass nextCursor to `after` for the next page and prevCursor '
                 'to `before` for the previous one; both are null at the ends.\n"""\ntype PageMeta {\n  currentPage: Int\n'
                 '  lastPage: Int\n  nextCursor: String\n  perPage: Int!\n  prevCursor: String\n  total: Int\n}')


# -- helpers ------------------------------------------------------------------------------------

def sdl(registry: Registry, **sections: dict[str, Any]) -> str:
    return render(registry, GraphQLConfig(sections, app_dir=ROOT), profile="users")


JOINED_TEXT = (" all (every one of a list of filters holds), any (one of them does) and not (a filter does not)"
               " join filters, at most 3 deep and with 50 operators in all.")


def JOINED(type_name: str) -> list[str]:  # noqa: N802  (read as a constant of each type)
    """The members of `<Type>Filter` that join filters."""
    return [f"all: [{type_name}Filter!]", f"any: [{type_name}Filter!]", f"not: {type_name}Filter"]


def members(text: str, keyword: str, name: str) -> list[str]:
    """The member lines of `<keyword> <name> { ... }` in SDL text; [] when there is no such block."""
    lines = text.splitlines()
    header = f"{keyword} {name} {{"
    if header not in lines:
        return []
    start = lines.index(header) + 1
    end = lines.index("}", start)
    return _one_line_each([line.strip() for line in lines[start:end]])


def _one_line_each(lines: list[str]) -> list[str]:
    """Member lines without descriptions, a member whose arguments span lines written on one."""
    kept: list[str] = []
    in_description, arguments = False, None
    for line in lines:
        if in_description or line.startswith('"""'):
            closes = line.endswith('"""') and (in_description or len(line) > 3)
            in_description = not closes
            continue
        if not line:
            continue
        if line.endswith("("):
            arguments = [line[:-1]]
        elif arguments is not None and line.startswith(")"):
            kept.append(f"{arguments[0]}({', '.join(arguments[1:])}{line}")
            arguments = None
        elif arguments is not None:
            arguments.append(line)
        else:
            kept.append(line)
    return kept


def block(text: str, header: str) -> str:
    """The block `header { ... }` of SDL text, with the description above it."""
    chunks = text.split("\n\n")
    return next(chunk for chunk in chunks if f"\n{header} {{\n" in f"\n{chunk}")


def blocks(text: str) -> list[str]:
    """The `type X` / `input X` headers of SDL text, in order."""
    return [line[:-2] for line in text.splitlines() if line.endswith(" {")]


FILTERED = {"Comment", "Post", "User"}  # the types with matchable fields or relations to filter through
TRASHING = {"Comment"}  # the types with soft deletes


def queries_of(type_name: str, first: int = 15) -> list[str]:
    name = type_name[0].lower() + type_name[1:]
    narrowing = f"filter: {type_name}Filter, " if type_name in FILTERED else ""
    trashed = ", trashed: Trashed" if type_name in TRASHING else ""
    arguments = f"first: Int = {first}, page: Int = 1, search: String, sort: String{trashed}"
    return [f"{name}(id: ID!{trashed}): {type_name}", f"{name}List({narrowing}{arguments}): [{type_name}!]!",
            f"{name}Page(after: String, before: String, count: Count = EXACT, {narrowing}{arguments}): "
            f"{type_name}Page!", *EXTENSION_QUERIES.get(type_name, [])]


def mutations_of(type_name: str) -> list[str]:
    trashing = type_name in TRASHING
    return [f"create{type_name}(input: {type_name}Input!): {type_name}!",
            f"create{type_name}Bulk(input: [{type_name}Input!]!): [{type_name}!]!",
            f"delete{type_name}({'force: Boolean, ' if trashing else ''}id: ID!, version: Int): Boolean!",
            *([f"restore{type_name}(id: ID!, version: Int): {type_name}!"] if trashing else []),
            f"delete{type_name}Bulk(ids: [ID!]!): Boolean!",
            f"update{type_name}(id: ID!, input: {type_name}Input!, version: Int): {type_name}!",
            f"update{type_name}Bulk(input: [{type_name}BulkUpdate!]!): [{type_name}!]!",
            *EXTENSION_MUTATIONS.get(type_name, [])]


# The posts' BelongsToMany tags: one mutation per operation.
POST_TAGS = [f"{operation}PostTags(id: ID!, ids: [ID!]!, version: Int): Post!" for operation in ("attach", "detach", "sync")]
# With the user repository in the schema: accounts by mail.
ACCOUNTS = ["forgotPassword(email: String!): Boolean!", "resendVerification: Boolean!",
            "resetPassword(email: String!, password: String!, passwordConfirmation: String!, token: String!): Boolean!"]


def bulk_update_members(type_name: str) -> list[str]:
    """`<Type>BulkUpdate`: the id, the version read, and the fields of `<Type>Input`."""
    return sorted(INPUT_MEMBERS[type_name] + ["id: ID!", "version: Int"])


def edit(app_dir: Path, file: str, old: str, new: str) -> None:
    source = app_dir / "repositories" / file
    text = source.read_text()
    assert old in text, f"{old!r} is not in {file}"
    source.write_text(text.replace(old, new, 1))


@contextmanager
def app_copy(tmp_path: Path, edits: list[tuple[str, str, str]] = (), graphql_toml: str | None = None
             ) -> Iterator[tuple[Path, Registry]]:
    """A copy of the demo app changed by `edits`, loaded; sys.path and sys.modules restored afterwards."""
    app_dir = (tmp_path / "app").resolve()
    shutil.copytree(ROOT / "repositories", app_dir / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    for file, old, new in edits:
        edit(app_dir, file, old, new)
    if graphql_toml is not None:
        (app_dir / "graphql.toml").write_text(graphql_toml)
    try:
        yield app_dir, load_app(app_dir)
    finally:
        sys.path.remove(str(app_dir))
        for name in [m for m in sys.modules if m == "repositories" or m.startswith("repositories.")]:
            del sys.modules[name]


POST_FIELDS_ANCHOR = 'field("title").required().rules("max:255").searchable(text=True).sortable(),\n'
TYPED_FIELDS = [("posts.py", POST_FIELDS_ANCHOR, POST_FIELDS_ANCHOR
                 + '            field("rating").numeric().nullable(),\n'
                 + '            field("born").date().nullable(),\n'
                 + '            field("score").numeric().rules("integer", "between:-100,100").nullable(),\n'
                 + '            field("stars").numeric().rules("integer", "min:-2147483648", "max:2147483647")'
                 + '.nullable(),\n'
                 + '            field("total").numeric().rules("integer", "min:0", "max:2147483648").nullable(),\n'
                 + '            field("summary").nullable(),\n')]


# -- the demo app's SDL -------------------------------------------------------------------------

def test_checked_in_schema_file_is_the_generator_output_for_the_demo_app(registry):
    assert (ROOT / "schema" / "schema.graphql").read_text() == sdl(registry)


def test_generating_twice_gives_byte_identical_output(registry):
    first = sdl(registry).encode()
    assert sdl(registry).encode() == first
    assert sdl(load_app(ROOT)).encode() == first  # freshly imported repositories too


def test_generated_sdl_survives_the_build_print_round_trip(registry):
    text = sdl(registry)
    assert print_schema(build_schema(text)) + "\n" == text


# The signed-in user's own record and tokens, beside `me` while the user repository is in the schema.
ACCOUNT_QUERIES = ["me: User", "tokens: [AccessToken!]!"]
ACCOUNT_MUTATIONS = ["createToken(abilities: [String!], expires_in: Int, name: String!): NewAccessToken!",
                     "revokeToken(id: ID!): Boolean!"]


def test_schema_has_one_object_type_and_one_input_type_per_repository_and_the_root_types(registry):
    assert blocks(sdl(registry)) == [
        "type AccessToken", "type AggregateMeta", "input BooleanFilter", "enum ChangeOperation", "type Comment",
        "input CommentBulkUpdate",
        "type CommentChange", "input CommentFilter", "input CommentInput", "type CommentPage", "enum Count",
        "input LongFilter", "type Mutation", "type NewAccessToken", "type PageMeta",
        "type Post", "type PostAggregation", "input PostBulkUpdate", "type PostChange", "input PostFilter",
        "type PostGroup", "type PostGroupKey", "input PostInput", "type PostPage", "input PostUserFilter", "type Query",
        "input StringFilter", "type Subscription", "type Tag", "input TagBulkUpdate", "type TagChange", "input TagInput",
        "type TagPage", "enum Trashed", "type User", "input UserBulkUpdate", "type UserChange", "input UserFilter",
        "input UserInput", "type UserPage"]


def test_subscriptions_are_one_changed_field_per_repository_filtered_by_its_matchable_fields(registry):
    text = sdl(registry)
    assert members(text, "type", "Subscription") == [
        "commentChanged(filter: CommentFilter, id: ID): CommentChange!",
        "postChanged(filter: PostFilter, id: ID): PostChange!",
        "tagChanged(id: ID): TagChange!",  # tags have no matchable field: no filter argument
        "userChanged(filter: UserFilter, id: ID): UserChange!"]  # only through relations: a user's email is theirs
    assert members(text, "input", "PostFilter") == ["all: [PostFilter!]", "any: [PostFilter!]", "has: [String!]",
                                                    "hasNot: [String!]", "not: PostFilter", "published: BooleanFilter",
                                                    "user: PostUserFilter", "user_id: StringFilter",
                                                    "views: LongFilter"]
    assert members(text, "type", "PostChange") == ["id: ID!", "operation: ChangeOperation!", "record: Post"]
    assert members(text, "enum", "ChangeOperation") == ["CREATED", "DELETED", "UPDATED"]


@pytest.mark.parametrize("type_name", sorted(SCALAR_MEMBERS))
def test_object_type_has_id_nullable_visible_fields_string_timestamps_and_relations(registry, type_name):
    expected = sorted(SCALAR_MEMBERS[type_name] + RELATION_MEMBERS[type_name])
    assert members(sdl(registry), "type", type_name) == expected


@pytest.mark.parametrize("type_name", sorted(INPUT_MEMBERS))
def test_input_type_has_only_the_writable_fields_all_nullable(registry, type_name):
    assert members(sdl(registry), "input", f"{type_name}Input") == INPUT_MEMBERS[type_name]


def test_hidden_fields_are_not_on_the_object_type_but_writable_ones_are_inputs(registry):
    text = sdl(registry)
    assert [m for m in members(text, "type", "User") if m.startswith("password")] == []
    assert "password: String" in members(text, "input", "UserInput")


def test_queries_are_a_show_and_a_list_per_repository_and_me(registry):
    expected = sorted([*(line for type_name in TYPES.values() for line in queries_of(type_name)), *ACCOUNT_QUERIES])
    assert members(sdl(registry), "type", "Query") == expected


@pytest.mark.parametrize("profile, sections", [(None, {}), ("users", {"repositories": {"exclude": ["users"]}})],
                         ids=["no-user-repository", "users-excluded"])
def test_me_needs_the_user_repository_in_the_schema(registry, profile, sections):
    text = render(registry, GraphQLConfig(sections, app_dir=ROOT), profile=profile)
    assert not set(ACCOUNT_QUERIES) & set(members(text, "type", "Query"))
    assert not set(ACCOUNT_MUTATIONS) & set(members(text, "type", "Mutation"))
    assert members(text, "type", "Query")  # the other queries are there


def test_mutations_are_create_update_delete_per_repository_and_attach_detach_sync_per_belongs_to_many(registry):
    expected = sorted([*(line for type_name in TYPES.values() for line in mutations_of(type_name)), *POST_TAGS,
                       *ACCOUNT_MUTATIONS, *ACCOUNTS])
    assert members(sdl(registry), "type", "Mutation") == expected


def test_relation_mutations_need_the_related_repository_in_the_schema(registry):
    text = sdl(registry, repositories={"exclude": ["tags"]})
    assert [m for m in members(text, "type", "Mutation") if "Tags" in m] == []


def test_fields_are_generated_with_the_console_context_no_user(tmp_path):
    console_only = ('            *([field("seen_by_console")] if request.door == "console" '
                    'and request.user is None else []),\n')
    with app_copy(tmp_path, [("posts.py", POST_FIELDS_ANCHOR, POST_FIELDS_ANCHOR + console_only)]) as (_, registry):
        text = sdl(registry)
    assert members(text, "type", "Post") == sorted(SCALAR_MEMBERS["Post"] + RELATION_MEMBERS["Post"]
                                                   + ["seen_by_console: String"])
    assert members(text, "input", "PostInput") == sorted(INPUT_MEMBERS["Post"] + ["seen_by_console: String"])


# -- typed defaults and the type mapping ---------------------------------------------------------

# The typed Post's scalar fields by kind default; user_id (string) and cover (image) are on the type only.
# Integers within 32 bits by their rules are Int (score, stars); without such bounds, Long (views, total).
TYPED_POST_INPUT = {"body": "String", "born": "String", "published": "Boolean", "rating": "Float", "score": "Int",
                    "stars": "Int", "summary": "String", "title": "String", "total": "Long", "views": "Long"}
TYPED_POST_TYPE_ONLY = {"cover": "String", "user_id": "String"}


def typed_post(overrides: dict[str, str]) -> tuple[list[str], list[str]]:
    """The expected members of Post and PostInput in the typed copy, with `overrides` applied."""
    inputs = {name: overrides.get(name, scalar) for name, scalar in TYPED_POST_INPUT.items()}
    type_only = {name: overrides.get(name, scalar) for name, scalar in TYPED_POST_TYPE_ONLY.items()}
    fixed = ["created_at: String", "id: ID!", "updated_at: String", "version: Int"] + RELATION_MEMBERS["Post"]
    object_members = sorted([f"{n}: {s}" for n, s in {**inputs, **type_only}.items()] + fixed)
    return object_members, [f"{n}: {s}" for n, s in sorted(inputs.items())]


def test_typed_defaults_numeric_float_integer_int_within_32_bits_else_long_boolean_boolean_date_text_string(tmp_path):
    with app_copy(tmp_path, TYPED_FIELDS) as (_, registry):
        text = sdl(registry)
    object_members, input_members = typed_post({})
    assert members(text, "type", "Post") == object_members
    assert members(text, "input", "PostInput") == input_members
    assert object_members == sorted(SCALAR_MEMBERS["Post"] + RELATION_MEMBERS["Post"]
                                    + ["born: String", "rating: Float", "score: Int", "stars: Int", "summary: String",
                                       "total: Long"])


@pytest.mark.parametrize("mapping, overrides", [
    ('numeric = "Int"', {"rating": "Int"}),
    ('integer = "Float"', {"score": "Float", "stars": "Float"}),
    ('long = "Float"', {"total": "Float", "views": "Float"}),
    ('boolean = "String"', {"published": "String"}),
    ('date = "Int"', {"born": "Int"}),
    ('string = "ID"', {"summary": "ID", "title": "ID", "user_id": "ID"}),
])
def test_type_mapping_in_graphql_toml_is_honoured(tmp_path, mapping, overrides):
    with app_copy(tmp_path, TYPED_FIELDS, graphql_toml=f"[types]\n{mapping}\n") as (app_dir, registry):
        text = render(registry, load_graphql_config(app_dir))
    object_members, input_members = typed_post(overrides)
    assert members(text, "type", "Post") == object_members
    assert members(text, "input", "PostInput") == input_members


def test_type_mapping_to_an_unknown_scalar_is_a_declaration_error(registry):
    with pytest.raises(DeclarationError) as raised:
        sdl(registry, types={"boolean": "Bit"})
    assert str(raised.value) == "graphql config maps 'boolean' to 'Bit', which is not a built-in scalar"


# -- repositories, schema options -----------------------------------------------------------------

def test_include_keeps_only_the_named_repositories_and_drops_relations_to_the_others(registry):
    change = "type {0}Change {{\n  id: ID!\n  operation: ChangeOperation!\n  record: {0}\n}}"
    page = "type {0}Page {{\n  data: [{0}!]!\n  meta: PageMeta!\n}}"
    whole = sdl(registry)  # the aggregation's types, as the checked-in schema has them
    assert sdl(registry, repositories={"include": ["posts", "tags"]}) == "\n\n".join([
        block(whole, "type AggregateMeta"),
        BOOLEAN_FILTER_SDL,
        "enum ChangeOperation {\n  CREATED\n  DELETED\n  UPDATED\n}",
        COUNT_SDL,
        JSON_SDL,
        LONG_SDL,
        LONG_FILTER_SDL,
        "type Mutation {\n" + "".join(f"  {m}\n" for m in sorted(mutations_of("Post") + mutations_of("Tag") + POST_TAGS))
        + "}",
        PAGE_META_SDL,
        "type Post {\n" + "".join(f"  {m}\n" for m in sorted(SCALAR_MEMBERS["Post"]
                                                               + ["tags(first: Int = 15): [Tag!]!"])) + "}",
        block(whole, "type PostAggregation"),
        "input PostBulkUpdate {\n" + "".join(f"  {m}\n" for m in bulk_update_members("Post")) + "}",
        change.format("Post"),
        f'"""\nFilters on Post records, combined with AND: one operator object per field;{JOINED_TEXT}\n"""\n'
        "input PostFilter {\n" + "".join(f"  {m}\n" for m in JOINED("Post")[:2])
        + '\n  """\n  Only records with at least one related record the user may see in each of these (tags).\n  """\n'
        + '  has: [String!]\n\n  """\n  Only records with no related record the user may see in each of these (tags).\n'
        + '  """\n  hasNot: [String!]\n'
        + f"  {JOINED('Post')[2]}\n  published: BooleanFilter\n  user_id: StringFilter\n  views: LongFilter\n}}",
        block(whole, "type PostGroup"),
        block(whole, "type PostGroupKey"),
        "input PostInput {\n" + "".join(f"  {m}\n" for m in INPUT_MEMBERS["Post"]) + "}",
        page.format("Post"),
        "type Query {\n" + "".join(f"  {m}\n" for m in sorted(queries_of("Post") + queries_of("Tag"))) + "}",
        STRING_FILTER_SDL,
        "type Subscription {\n  postChanged(filter: PostFilter, id: ID): PostChange!\n  tagChanged(id: ID): TagChange!\n}",
        "type Tag {\n" + "".join(f"  {m}\n" for m in SCALAR_MEMBERS["Tag"]) + "}",
        "input TagBulkUpdate {\n" + "".join(f"  {m}\n" for m in bulk_update_members("Tag")) + "}",
        change.format("Tag"),
        "input TagInput {\n  name: String\n}",
        page.format("Tag"),
    ]) + "\n"


def test_exclude_removes_a_repository_and_every_relation_to_it(registry):
    text = sdl(registry, repositories={"exclude": ["users"]})
    assert [b for b in blocks(text) if "Change" not in b and "Filter" not in b and "Subscription" not in b] == [
        "type AggregateMeta", "type Comment", "input CommentBulkUpdate", "input CommentInput", "type CommentPage",
        "enum Count", "type Mutation", "type PageMeta", "type Post", "type PostAggregation", "input PostBulkUpdate",
        "type PostGroup", "type PostGroupKey", "input PostInput", "type PostPage", "type Query", "type Tag",
        "input TagBulkUpdate", "input TagInput", "type TagPage", "enum Trashed"]
    assert "userChanged" not in text and "UserChange" not in text
    assert members(text, "type", "Comment") == sorted(SCALAR_MEMBERS["Comment"] + ["post: Post"])
    assert members(text, "type", "Post") == sorted(SCALAR_MEMBERS["Post"] + ["comments(first: Int = 15): [Comment!]!",
                                                                             "tags(first: Int = 15): [Tag!]!"])
    assert members(text, "type", "Query") == sorted(
        line for type_name in ("Comment", "Post", "Tag") for line in queries_of(type_name))


def test_include_and_exclude_from_graphql_toml_are_honoured(tmp_path):
    toml = '[repositories]\ninclude = ["posts", "tags", "users"]\nexclude = ["users"]\n'
    with app_copy(tmp_path, graphql_toml=toml) as (app_dir, registry):
        assert render(registry, load_graphql_config(app_dir)) == sdl(registry, repositories={"include": ["posts",
                                                                                                        "tags"]})


def test_relations_option_false_leaves_only_scalar_members(registry):
    text = sdl(registry, schema={"relations": False})
    for type_name, expected in SCALAR_MEMBERS.items():
        assert members(text, "type", type_name) == expected


def test_default_first_option_is_the_default_of_lists_and_relation_fields(registry):
    text = sdl(registry, schema={"default_first": 10})
    assert members(text, "type", "Query") == sorted(
        [*(line for type_name in TYPES.values() for line in queries_of(type_name, first=10)), *ACCOUNT_QUERIES])
    assert members(text, "type", "Post") == sorted(SCALAR_MEMBERS["Post"] + [
        "comments(first: Int = 10): [Comment!]!", "tags(first: Int = 10): [Tag!]!", "user: User"])


def test_excluding_every_repository_still_gives_a_valid_schema(registry):
    text = sdl(registry, repositories={"exclude": list(TYPES)})
    assert text == ('type Query {\n  """There are no repositories in the schema."""\n  _empty: Boolean\n}\n')
    assert print_schema(build_schema(text)) + "\n" == text
