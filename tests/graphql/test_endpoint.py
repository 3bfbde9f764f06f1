"""`/graphql` over real HTTP: queries, mutations with and without
permission, field visibility, pagination, GET, variables and operationName, customized resolvers,
batched relation loading (reads counted), bad queries, depth and cost limits, the document cache,
and the route helper.
"""
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from graphql import get_introspection_query, print_schema
from tornado.web import Application

from service.console.application import make_app
from service.core.declarations.app import Restify
from service.graphql.config import GraphQLConfig
from service.graphql.executor import load_resolver_classes
from service.graphql.generator import render
from service.graphql.handler import GraphQLHandler, graphql_routes
from service.graphql.service import GraphQLService
from storage import Filter
from tests.http.test_index_queries import STAMP_JSON, seed, seed_post

ROOT = Path(__file__).resolve().parents[2]
POSTS = "/api/restify/posts"
MISSING_ID = "0" * 24
AUTH_READS = [("find", "personal_access_tokens"), ("find", "users")]  # resolving a bearer token


# -- fixtures: the app as the factory builds it, or built around a given GraphQL config ------------

@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's overrides when parametrized indirectly."""
    return {**config, **getattr(request, "param", {})}


@pytest.fixture
def app(restify, request, tmp_path):
    """`make_app(restify)` (which serves ROOT/schema); parametrized indirectly with a builder
    `(restify, tmp_path) -> Application`, whatever that builds."""
    build = getattr(request, "param", None)
    return build(restify, tmp_path) if build else make_app(restify)


@pytest.fixture
def graphql(app) -> GraphQLService:
    """The GraphQL service the application serves."""
    return next(rule.target_kwargs["graphql"] for rule in app.wildcard_router.rules
                if rule.target is GraphQLHandler)


def serving(make_config: Callable[[Restify, Path], GraphQLConfig]) -> Callable:
    """An `app` builder: the factory's app with a GraphQL service on `make_config(restify, tmp_path)`."""
    def build(restify, tmp_path):
        return make_app(restify, graphql=GraphQLService(restify, make_config(restify, tmp_path)))
    return build


def limits(**schema: int) -> Callable:
    return serving(lambda restify, tmp_path: GraphQLConfig({"schema": schema}, app_dir=ROOT))


# -- helpers --------------------------------------------------------------------------------------

async def run(api, query: Any, variables: Any = None, token: str | None = None, **extra: Any) -> dict:
    """POSTs a GraphQL request; the response is always a 200 with a JSON body."""
    payload = {"query": query, **({"variables": variables} if variables is not None else {}), **extra}
    response = await api.post("/graphql", payload, token=token)
    assert response.status == 200, response.body
    return response.json


async def run_get(api, **params: Any) -> dict:
    response = await api.get(f"/graphql?{urlencode(params)}")
    assert response.status == 200, response.body
    return response.json


def failure(query: str, field: str, code: str, message: str, **extensions: Any) -> dict:
    """One error raised while resolving the root field `field` of a one-line `query`."""
    return {"message": message, "locations": [{"line": 1, "column": query.index(field) + 1}], "path": [field],
            "extensions": {"code": code, **extensions}}


def invalid(message: str, column: int | None = None, code: str = "GRAPHQL_VALIDATION_FAILED") -> dict:
    """One error refusing the request before anything ran."""
    error: dict[str, Any] = {"message": message}
    if column is not None:
        error["locations"] = [{"line": 1, "column": column}]
    error["extensions"] = {"code": code}
    return error


def refused(message: str, code: str) -> dict:
    return {"errors": [{"message": message, "extensions": {"code": code}}]}


UNAUTHENTICATED = ("UNAUTHENTICATED", "Unauthenticated.")
FORBIDDEN = ("FORBIDDEN", "This action is unauthorized.")
NOT_FOUND = ("NOT_FOUND", "Not found.")


def post_fields(id: str, title: str, user_id: str | None = None, **values: Any) -> dict:
    return {"id": id, "title": title, "body": None, "views": "0", "published": False, "user_id": user_id,
            "cover": None, "created_at": STAMP_JSON, "updated_at": STAMP_JSON, **values}


POST_SELECTION = "id title body views published user_id cover created_at updated_at"


async def stored(db, collection: str, id: str) -> dict | None:
    return await db.collection(collection).find_by_id(id)


async def post_count(db) -> int:
    return await db.collection("posts").count(Filter())


# -- queries --------------------------------------------------------------------------------------

async def test_post_query_returns_the_record_with_typed_fields(api, db):
    id = await seed_post(db, "Hello", body="Text", views=3, published=True, user_id="u1")
    body = await run(api, f'{{ post(id: "{id}") {{ {POST_SELECTION} }} }}')
    assert body == {"data": {"post": post_fields(id, "Hello", "u1", body="Text", views="3", published=True)}}


async def test_post_query_for_an_unknown_id_is_null_with_a_not_found_error(api):
    query = f'{{ post(id: "{MISSING_ID}") {{ id }} }}'
    assert await run(api, query) == {"data": {"post": None}, "errors": [failure(query, "post", *NOT_FOUND)]}


@pytest.mark.parametrize("arguments, expected", [
    ("", ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]),
    ("(first: 3)", ["p0", "p1", "p2"]),
    ("(first: 3, page: 2)", ["p3", "p4", "p5"]),
    ("(first: 3, page: 3)", ["p6"]),
    ("(first: 3, page: 4)", []),
    ("(page: 2)", []),
])
async def test_post_list_honours_first_and_page(api, db, arguments, expected):
    for n in range(7):
        await seed_post(db, f"p{n}")
    body = await run(api, f"{{ postList{arguments} {{ title }} }}")
    assert body == {"data": {"postList": [{"title": title} for title in expected]}}


async def test_the_served_schema_file_answers_a_filtered_uncounted_page(api, db, ann):
    """schema/schema.graphql (read from SDL: `Count` values are their names) serves `postPage` too."""
    for n in range(3):
        await seed_post(db, f"p{n}", published=n > 0, user_id=ann["id"])
    query = ('{ postPage(first: 1, count: NONE, sort: "-title", filter: {published: {eq: true}, user_id: {in: ["%s"]}}) '
             '{ data { title } meta { total currentPage lastPage perPage } } }' % ann["id"])
    body = await run(api, query)
    assert body == {"data": {"postPage": {"data": [{"title": "p2"}], "meta": {
        "total": None, "currentPage": 1, "lastPage": None, "perPage": 1}}}}


@pytest.mark.parametrize("config", [{"pagination": {"max_per_page": 5}}], indirect=True)
@pytest.mark.parametrize("arguments, expected", [
    ("(first: 50)", ["p0", "p1", "p2", "p3", "p4"]),
    ("(first: 50, page: 2)", ["p5", "p6", "p7"]),
    ("(first: 2, page: 2)", ["p2", "p3"]),
])
async def test_post_list_first_is_clamped_by_max_per_page(api, db, arguments, expected):
    for n in range(8):
        await seed_post(db, f"p{n}")
    body = await run(api, f"{{ postList{arguments} {{ title }} }}")
    assert body == {"data": {"postList": [{"title": title} for title in expected]}}


@pytest.mark.parametrize("door", ["show", "list"])
async def test_relation_field_first_limits_the_related_list(api, db, door):
    id = await seed_post(db, "Hello")
    for n in range(4):
        await seed(db, "comments", body=f"c{n}", post_id=id, user_id=None)
    comments = {"comments": [{"body": "c0"}, {"body": "c1"}]}
    if door == "show":
        body = await run(api, f'{{ post(id: "{id}") {{ comments(first: 2) {{ body }} }} }}')
        assert body == {"data": {"post": comments}}
    else:
        body = await run(api, "{ postList { comments(first: 2) { body } } }")
        assert body == {"data": {"postList": [comments]}}


async def test_relation_field_first_above_relatable_per_page_is_honoured_on_show_as_on_list(api, db):
    id = await seed_post(db, "Hello")
    for n in range(20):
        await seed(db, "comments", body=f"c{n:02}", post_id=id, user_id=None)
    expected = [{"body": f"c{n:02}"} for n in range(20)]
    listed = await run(api, "{ postList { comments(first: 20) { body } } }")
    assert listed == {"data": {"postList": [{"comments": expected}]}}
    shown = await run(api, f'{{ post(id: "{id}") {{ comments(first: 20) {{ body }} }} }}')
    assert shown == {"data": {"post": {"comments": expected}}}


async def test_relation_field_first_given_by_a_variable_is_honoured_on_show(api, db):
    id = await seed_post(db, "Hello")
    for n in range(20):
        await seed(db, "comments", body=f"c{n:02}", post_id=id, user_id=None)
    query = "query($id: ID!, $n: Int) { post(id: $id) { comments(first: $n) { body } } }"
    shown = await run(api, query, {"id": id, "n": 20})
    assert shown == {"data": {"post": {"comments": [{"body": f"c{n:02}"} for n in range(20)]}}}


async def test_get_runs_a_query_with_variables_and_operation_name(api, db):
    ids = [await seed_post(db, f"p{n}") for n in range(3)]
    query = "query Titles($n: Int) { postList(first: $n) { title } } query One($id: ID!) { post(id: $id) { title } }"
    assert await run_get(api, query=query, variables=json.dumps({"n": 2}), operationName="Titles") == {
        "data": {"postList": [{"title": "p0"}, {"title": "p1"}]}}
    assert await run_get(api, query=query, variables=json.dumps({"id": ids[2]}), operationName="One") == {
        "data": {"post": {"title": "p2"}}}


@pytest.mark.parametrize("params", [
    {"query": 'mutation { deletePost(id: "POST_ID") }'},
    {"query": 'query Q { post(id: "POST_ID") { id } } mutation M { deletePost(id: "POST_ID") }', "operationName": "M"},
])
async def test_a_mutation_over_get_is_refused_and_changes_nothing(api, db, params):
    owner = await api.register("Ann")
    id = await seed_post(db, "Hello", user_id=owner["id"])
    before = await stored(db, "posts", id)
    query = params["query"].replace("POST_ID", id)
    response = await api.get(f"/graphql?{urlencode({**params, 'query': query})}", token=owner["token"])
    assert (response.status, response.json) == (200, refused("Mutations must be sent with POST.", "BAD_REQUEST"))
    assert await stored(db, "posts", id) == before


SUBSCRIPTIONS = {"message": "Subscriptions are served over WebSocket."}


@pytest.mark.parametrize("params", [
    {"query": "subscription { postChanged { operation id } }"},
    {"query": "subscription Watch($id: ID) { postChanged(id: $id) { id record { title } } }",
     "variables": {"id": MISSING_ID}},
    {"query": "query Q { postList { id } } subscription S { postChanged { id } }", "operationName": "S"},
], ids=["plain", "variables", "named"])
async def test_a_subscription_over_post_or_get_is_a_400_naming_the_websocket(api, db, params):
    response = await api.post("/graphql", params)
    assert (response.status, response.json) == (400, SUBSCRIPTIONS)
    sent = {**params, **({"variables": json.dumps(params["variables"])} if "variables" in params else {})}
    response = await api.get(f"/graphql?{urlencode(sent)}")
    assert (response.status, response.json) == (400, SUBSCRIPTIONS)
    # the query beside it is still served
    if "operationName" in params:
        assert await run(api, params["query"], operationName="Q") == {"data": {"postList": []}}


async def test_variables_fill_the_query_and_operation_name_picks_the_operation(api, db):
    ids = [await seed_post(db, f"p{n}") for n in range(3)]
    query = "query A($id: ID!) { post(id: $id) { title } } query B($n: Int) { postList(first: $n) { id } }"
    assert await run(api, query, {"id": ids[1]}, operationName="A") == {"data": {"post": {"title": "p1"}}}
    assert await run(api, query, {"n": 1}, operationName="B") == {"data": {"postList": [{"id": ids[0]}]}}
    assert await run(api, query, {"id": ids[1]}) == {"data": None, "errors": [
        invalid("Must provide operation name if query contains multiple operations.")]}
    assert await run(api, query, {}, operationName="C") == {"data": None, "errors": [
        invalid("Unknown operation named 'C'.")]}


# -- mutations and permissions --------------------------------------------------------------------

CREATE = 'mutation { createPost(input: {title: "Hello", views: 3}) { id title views published user_id user { name } } }'


async def test_create_post_stores_it_for_the_signed_in_user(api, db):
    ann = await api.register("Ann")
    body = await run(api, CREATE, token=ann["token"])
    created = body["data"]["createPost"]
    assert body == {"data": {"createPost": {"id": created["id"], "title": "Hello", "views": "3", "published": False,
                                            "user_id": ann["id"], "user": {"name": "Ann"}}}}
    document = await stored(db, "posts", created["id"])
    assert {k: document[k] for k in ("title", "views", "published", "user_id")} == {
        "title": "Hello", "views": 3, "published": False, "user_id": ann["id"]}


async def test_guest_create_post_is_unauthenticated_and_stores_nothing(api, db):
    assert await run(api, CREATE) == {"data": None, "errors": [failure(CREATE, "createPost", *UNAUTHENTICATED)]}
    assert await post_count(db) == 0


@pytest.mark.parametrize("signed_in, error", [(False, UNAUTHENTICATED), (True, FORBIDDEN)])
async def test_create_user_is_refused_by_the_policy(api, db, signed_in, error):
    ann = await api.register("Ann")
    query = 'mutation { createUser(input: {name: "Bo", email: "bo@example.com", password: "long-enough"}) { id } }'
    body = await run(api, query, token=ann["token"] if signed_in else None)
    assert body == {"data": None, "errors": [failure(query, "createUser", *error)]}


async def test_owner_update_post_changes_only_the_fields_sent(api, db):
    ann = await api.register("Ann")
    id = await seed_post(db, "Hello", body="Text", views=3, user_id=ann["id"])
    query = ('mutation($id: ID!) { updatePost(id: $id, input: {title: "Bye", published: true}) { '
             + POST_SELECTION + " } }")
    body = await run(api, query, {"id": id}, token=ann["token"])
    updated_at = body["data"]["updatePost"]["updated_at"]
    assert updated_at != STAMP_JSON
    assert body == {"data": {"updatePost": post_fields(id, "Bye", ann["id"], body="Text", views="3", published=True,
                                                       updated_at=updated_at)}}


@pytest.mark.parametrize("mutation", [
    'mutation($id: ID!) { updatePost(id: $id, input: {title: "Mine now"}) { id } }',
    'mutation($id: ID!) { deletePost(id: $id) }',
])
async def test_another_users_post_cannot_be_changed_forbidden_and_the_record_is_unchanged(api, db, mutation):
    ann, bob = await api.register("Ann"), await api.register("Bob")
    id = await seed_post(db, "Hello", user_id=ann["id"])
    before = await stored(db, "posts", id)
    field = "updatePost" if "updatePost" in mutation else "deletePost"
    assert await run(api, mutation, {"id": id}, token=bob["token"]) == {
        "data": None, "errors": [failure(mutation, field, *FORBIDDEN)]}
    assert await stored(db, "posts", id) == before


@pytest.mark.parametrize("mutation, field", [
    ('mutation($id: ID!) { updatePost(id: $id, input: {title: "x"}) { id } }', "updatePost"),
    ('mutation($id: ID!) { deletePost(id: $id) }', "deletePost"),
    ('mutation($id: ID!) { updateTag(id: $id, input: {name: "x"}) { id } }', "updateTag"),
])
@pytest.mark.parametrize("id", [MISSING_ID, "not-an-id"])
async def test_mutations_on_an_unknown_id_are_not_found(api, mutation, field, id):
    ann = await api.register("Ann")
    assert await run(api, mutation, {"id": id}, token=ann["token"]) == {
        "data": None, "errors": [failure(mutation, field, *NOT_FOUND)]}


async def test_owner_delete_post_returns_true_and_removes_it(api, db):
    ann = await api.register("Ann")
    id = await seed_post(db, "Hello", user_id=ann["id"])
    assert await run(api, 'mutation($id: ID!) { deletePost(id: $id) }', {"id": id}, token=ann["token"]) == {
        "data": {"deletePost": True}}
    assert await stored(db, "posts", id) is None


@pytest.mark.parametrize("title", ["x" * 256, ""])
async def test_invalid_create_input_fails_validation_with_the_rest_errors(api, db, title):
    ann = await api.register("Ann")
    rest = await api.post(POSTS, {"title": title}, token=ann["token"])
    assert rest.status == 422
    query = "mutation($input: PostInput!) { createPost(input: $input) { id } }"
    body = await run(api, query, {"input": {"title": title}}, token=ann["token"])
    assert body == {"data": None, "errors": [failure(query, "createPost", "VALIDATION_FAILED",
                                                     "The given data was invalid.", errors=rest.json["errors"])]}
    assert rest.json["errors"] == {"title": ["The title may not be greater than 255 characters." if title
                                             else "The title field is required."]}
    assert await post_count(db) == 0


@pytest.mark.parametrize("input, errors", [
    ({"title": "x" * 256}, {"title": ["The title may not be greater than 255 characters."]}),
    ({"title": ""}, {"title": ["The title field is required."]}),
    ({"title": None}, {"title": ["The title field is required."]}),
    ({"views": -1}, {"views": ["The views must be at least 0."]}),
])
async def test_invalid_update_input_fails_validation_with_the_rest_errors_and_changes_nothing(api, db, input, errors):
    ann = await api.register("Ann")
    id = await seed_post(db, "Hello", user_id=ann["id"])
    before = await stored(db, "posts", id)
    rest = await api.patch(f"{POSTS}/{id}", input, token=ann["token"])
    assert (rest.status, rest.json["errors"]) == (422, errors)
    query = "mutation($id: ID!, $input: PostInput!) { updatePost(id: $id, input: $input) { id } }"
    body = await run(api, query, {"id": id, "input": input}, token=ann["token"])
    assert body == {"data": None, "errors": [failure(query, "updatePost", "VALIDATION_FAILED",
                                                     "The given data was invalid.", errors=rest.json["errors"])]}
    assert await stored(db, "posts", id) == before


async def test_readonly_and_image_fields_are_not_inputs(api, db):
    ann = await api.register("Ann")
    for name in ("user_id", "cover"):
        query = f'mutation {{ createPost(input: {{{name}: "x", title: "t"}}) {{ id }} }}'
        assert await run(api, query, token=ann["token"]) == {"errors": [
            invalid(f"Expected value of type 'PostInput' not to include unknown field '{name}', "
                    f'found: {{ {name}: "x", title: "t" }}.', query.index(name) + 1)]}
    assert await post_count(db) == 0


async def test_a_user_changes_their_password_through_update_user(api):
    ann = await api.register("Ann")
    other = (await api.post("/api/login", {"email": ann["email"], "password": "secret-pass"})).json["meta"]["token"]
    query = ('mutation($id: ID!) { updateUser(id: $id, input: {password: "new-password", '
             'password_confirmation: "new-password", current_password: "secret-pass"}) { id } }')
    assert await run(api, query, {"id": ann["id"]}, token=ann["token"]) == {"data": {"updateUser": {"id": ann["id"]}}}
    login = await api.post("/api/login", {"email": ann["email"], "password": "new-password"})
    assert login.status == 200
    assert (await api.get("/api/restify/profile", token=other)).status == 401  # every other token is revoked
    assert (await api.get("/api/restify/profile", token=ann["token"])).status == 200


@pytest.mark.parametrize("current, message", [("", "The current password field is required."),
                                              (', current_password: "wrong-pass"', "The password is incorrect.")])
async def test_update_user_needs_the_current_password_to_change_password_or_email(api, db, current, message):
    ann = await api.register("Ann")
    before = await stored(db, "users", ann["id"])
    for change in ('password: "new-password", password_confirmation: "new-password"', 'email: "new@example.com"'):
        query = f"mutation($id: ID!) {{ updateUser(id: $id, input: {{{change}{current}}}) {{ id }} }}"
        body = await run(api, query, {"id": ann["id"]}, token=ann["token"])
        assert body == {"data": None, "errors": [failure(query, "updateUser", "VALIDATION_FAILED",
                                                         "The given data was invalid.",
                                                         errors={"current_password": [message]})]}
    assert await stored(db, "users", ann["id"]) == before


# -- field visibility -----------------------------------------------------------------------------

async def test_user_has_no_password_field_querying_it_is_a_validation_error(api):
    ann = await api.register("Ann")
    query = f'{{ user(id: "{ann["id"]}") {{ name password }} }}'
    assert await run(api, query, token=ann["token"]) == {"errors": [
        invalid("Cannot query field 'password' on type 'User'.", query.index("password") + 1)]}


async def test_user_query_shows_the_visible_fields(api):
    ann = await api.register("Ann")
    query = f'{{ user(id: "{ann["id"]}") {{ id name email bio avatar }} }}'
    assert await run(api, query, token=ann["token"]) == {"data": {"user": {
        "id": ann["id"], "name": "Ann", "email": ann["email"], "bio": None, "avatar": None}}}


async def test_me_is_the_profile_of_the_token_user_with_its_relations(api, db):
    ann, bob = await api.register("Ann"), await api.register("Bob")
    mine = await seed_post(db, "Mine", user_id=ann["id"])
    await seed_post(db, "Not mine", user_id=bob["id"])
    query = "{ me { id name email posts { id title } } }"
    assert await run(api, query, token=ann["token"]) == {"data": {"me": {
        "id": ann["id"], "name": "Ann", "email": ann["email"], "posts": [{"id": mine, "title": "Mine"}]}}}
    # The same record the REST profile shows.
    profile = (await api.get("/api/restify/profile?include=posts", token=ann["token"])).json
    assert profile["attributes"]["email"] == ann["email"]
    assert [p["id"] for p in profile["relationships"]["posts"]] == [mine]


async def test_me_for_a_guest_is_null_with_an_unauthenticated_error(api):
    query = "{ me { id } }"
    assert await run(api, query) == {"data": {"me": None}, "errors": [failure(query, "me", *UNAUTHENTICATED)]}


async def test_relations_honour_the_target_repositorys_show_policy(api, db):
    ann = await api.register("Ann")
    await seed_post(db, "Hello", user_id=ann["id"])
    query = "{ postList { title user { name } } }"
    assert await run(api, query) == {"data": {"postList": [{"title": "Hello", "user": None}]}}  # guests see no users
    assert await run(api, query, token=ann["token"]) == {"data": {"postList": [{"title": "Hello",
                                                                                 "user": {"name": "Ann"}}]}}


# -- batched relation loading ---------------------------------------------------------------------

BATCHED = "{ postList(first: 50) { title user { name } comments { body user { name } } tags { name } } }"
BATCHED_READS = sorted(AUTH_READS + [("find", "posts"), ("find", "comments"),
                                     ("find", "users"), ("find", "tags"), ("find", "users")])


async def seed_blog(db, users: list[str], tags: list[str], start: int, count: int) -> list[dict]:
    """`count` posts, each with two comments and all the tags; returns what BATCHED should show."""
    names = {id: f"U{n}" for n, id in enumerate(users)}
    expected = []
    for n in range(start, start + count):
        author, first, second = users[n % 3], users[(n + 1) % 3], users[(n + 2) % 3]
        post = await seed_post(db, f"p{n:02}", user_id=author, tag_ids=tags)
        await seed(db, "comments", body=f"c{n}a", post_id=post, user_id=first)
        await seed(db, "comments", body=f"c{n}b", post_id=post, user_id=second)
        expected.append({"title": f"p{n:02}", "user": {"name": names[author]},
                         "comments": [{"body": f"c{n}a", "user": {"name": names[first]}},
                                      {"body": f"c{n}b", "user": {"name": names[second]}}],
                         "tags": [{"name": "t0"}, {"name": "t1"}]})
    return expected


async def test_relations_load_in_a_fixed_number_of_reads_whatever_the_number_of_posts(api, db, commands):
    viewer = await api.register("Viewer")
    users = [await seed(db, "users", name=f"U{n}", email=f"u{n}@example.com", password="x") for n in range(3)]
    tags = [await seed(db, "tags", name=f"t{n}") for n in range(2)]
    reads = {}
    expected = []
    for start, count in ((0, 5), (5, 25)):
        expected += await seed_blog(db, users, tags, start, count)
        commands.reset()
        body = await run(api, BATCHED, token=viewer["token"])
        reads[len(expected)] = sorted(commands.reads())
        assert body == {"data": {"postList": expected}}
    assert reads == {5: BATCHED_READS, 30: BATCHED_READS}


async def test_a_list_without_relations_reads_the_page_only_and_a_page_counts_too(api, db, commands):
    for n in range(3):
        await seed_post(db, f"p{n}")
    commands.reset()
    await run(api, "{ postList { title } }")  # a list shows no total
    assert commands.reads() == [("find", "posts")]
    commands.reset()
    assert await run(api, "{ postPage { meta { total } } }") == {"data": {"postPage": {"meta": {"total": 3}}}}
    assert commands.reads() == [("find", "posts"), ("count", "posts")]


async def test_relations_nested_deeper_than_max_related_depth_fail_like_rest_instead_of_coming_back_empty(api, db):
    ann = await api.register("Ann")
    id = await seed_post(db, "Hello", user_id=ann["id"])
    await seed(db, "comments", body="c", post_id=id, user_id=ann["id"])
    rest = await api.get(f"{POSTS}?related=comments.post.user.posts", token=ann["token"])
    assert rest.status == 400
    query = "{ postList(first: 2) { comments(first: 2) { post { user { posts(first: 2) { title } } } } } }"
    assert await run(api, query, token=ann["token"]) == {"data": None, "errors": [
        failure(query, "postList", "BAD_REQUEST", rest.json["message"], errors=rest.json["errors"])]}


# -- bad requests ---------------------------------------------------------------------------------

def nested(levels: int) -> str:
    """A query `levels` fields deep: postList > user > posts > user > ... > id, one row per list."""
    chain = ["postList(first: 1)"] + ["user" if n % 2 else "posts(first: 1)" for n in range(1, levels - 1)]
    return "{ " + " { ".join(chain) + " { id" + " }" * len(chain) + " }"


NOT_AN_OBJECT = refused("The variables must be a JSON object.", "BAD_REQUEST")


@pytest.mark.parametrize("payload, expected", [
    ({"query": "{ post(id: "}, {"errors": [invalid("Syntax Error: Unexpected <EOF>.", 12)]}),
    ({"query": "{ nope }"}, {"errors": [invalid("Cannot query field 'nope' on type 'Query'.", 3)]}),
    ({"query": "{ postList { id nope } }"}, {"errors": [invalid("Cannot query field 'nope' on type 'Post'.", 17)]}),
    ({"query": "{ postList(first: \"x\") { id } }"}, {"errors": [
        invalid('Int cannot represent non-integer value: "x"', 19)]}),
    ({"query": nested(11)}, refused("The query is deeper than 10 levels.", "QUERY_TOO_DEEP")),
    ({"query": "{ postList(first: 2000) { id title } }"},
     refused("The query costs 6000, more than the limit of 5000.", "QUERY_TOO_COSTLY")),
    ({"query": "{ a: postList(first: 1000) { id } b: postList(first: 1501) { id } }"},
     refused("The query costs 5002, more than the limit of 5000.", "QUERY_TOO_COSTLY")),
    ({"query": 42}, refused("The request must contain a query string.", "BAD_REQUEST")),
    ({"query": ["{ postList { id } }"]}, refused("The request must contain a query string.", "BAD_REQUEST")),
    ({"query": "   "}, refused("The request must contain a query string.", "BAD_REQUEST")),
    ({}, refused("The request must contain a query string.", "BAD_REQUEST")),
    ({"query": "{ postList { id } }", "variables": [1]}, NOT_AN_OBJECT),
    ({"query": "{ postList { id } }", "variables": "{}"}, NOT_AN_OBJECT),
    ({"query": "{ postList { id } }", "operationName": 5},
     refused("The operationName must be a string.", "BAD_REQUEST")),
], ids=["syntax", "unknown-root-field", "unknown-field", "bad-literal", "too-deep", "too-costly",
        "too-costly-summed", "query-not-string", "query-list", "query-blank", "no-query", "variables-list",
        "variables-string", "operation-name-not-string"])
async def test_a_bad_request_gets_a_graphql_error_never_a_500(api, payload, expected):
    response = await api.post("/graphql", payload)
    assert (response.status, response.json) == (200, expected)


@pytest.mark.parametrize("query, variables, message", [
    ("query($n: Int) { postList(first: $n) { id } }", {"n": "x"},
     "Variable '$n' has invalid value: Int cannot represent non-integer value: 'x'"),
    ("query($n: Int!) { postList(first: $n) { id } }", {},
     "Variable '$n' has invalid value: Expected a value of non-null type 'Int!' to be provided."),
])
async def test_an_invalid_variable_value_is_a_graphql_error_not_a_server_error(api, query, variables, message):
    assert await run(api, query, variables) == {"data": None, "errors": [invalid(message, 7)]}


@pytest.mark.parametrize("body, content_type, message", [
    (b"{nope", "application/json", "The request body is not valid JSON."),
    (b"[1]", "application/json", "The request body must be a JSON object."),
    (b"NaN", "application/json", "The request body is not valid JSON: NaN is not a JSON number."),
])
async def test_a_malformed_body_is_a_400_json_error(api, body, content_type, message):
    response = await api.request("POST", "/graphql", body=body, headers={"Content-Type": content_type})
    assert (response.status, response.json) == (400, {"message": message})


async def test_get_with_variables_that_are_not_json_is_a_400_json_error(api):
    response = await api.get(f"/graphql?{urlencode({'query': '{ postList { id } }', 'variables': 'nope'})}")
    assert (response.status, response.json) == (
        400, {"message": "The variables parameter is not valid JSON."})


@pytest.mark.parametrize("app", [limits(max_depth=3, max_cost=20)], indirect=True)
@pytest.mark.parametrize("query, expected", [
    ("{ postList(first: 1) { user { name } } }", {"data": {"postList": []}}),
    ("{ postList(first: 1) { user { posts(first: 1) { id } } } }",
     refused("The query is deeper than 3 levels.", "QUERY_TOO_DEEP")),
    ("{ postList(first: 10) { id } }", {"data": {"postList": []}}),
    ("{ postList(first: 11) { id } }", refused("The query costs 22, more than the limit of 20.", "QUERY_TOO_COSTLY")),
    ("{ postList { id } }", refused("The query costs 30, more than the limit of 20.", "QUERY_TOO_COSTLY")),
    ("{ postList(first: 1) { comments { id } } }",
     refused("The query costs 31, more than the limit of 20.", "QUERY_TOO_COSTLY")),
    ("query($n: Int) { postList(first: $n) { id } }", {"data": {"postList": []}}),
], ids=["depth-at-limit", "depth-over", "cost-at-limit", "cost-over", "cost-default-first",
        "cost-relation-default-first", "cost-variable-first"])
async def test_depth_and_cost_limits_come_from_the_graphql_config(api, query, expected):
    assert await run(api, query, {"n": 10}) == expected  # $n, where declared, is 10: cost 20


@pytest.mark.parametrize("config", [{"query": {"max_related_depth": 8}}], indirect=True)  # nested(10): 8 relations
async def test_the_default_depth_limit_is_10_levels(api):
    assert await run(api, nested(10)) == {"data": {"postList": []}}
    assert await run(api, nested(11)) == refused("The query is deeper than 10 levels.", "QUERY_TOO_DEEP")


async def test_the_standard_introspection_query_is_answered(api):
    body = await run(api, get_introspection_query())
    assert "errors" not in body
    assert body["data"]["__schema"]["queryType"] == {"kind": "OBJECT", "name": "Query"}


async def test_the_typename_meta_field_is_answered(api):
    assert await run(api, "{ __typename }") == {"data": {"__typename": "Query"}}


# -- the document cache ---------------------------------------------------------------------------

async def test_parsed_and_validated_documents_are_cached_by_query_text(api, graphql):
    cache = graphql.endpoint._cache
    assert len(cache) == 0
    query, other, broken = "{ postList { id } }", "{ tagList { id } }", "{ nope }"
    await run(api, query)
    entry = cache[query].result()
    await run(api, query, {"unused": 1})
    assert list(cache) == [query] and cache[query].result() is entry  # hit: the same parsed document
    await run(api, other)
    await run(api, broken)
    await run(api, broken)
    assert list(cache) == [query, other, broken]
    assert [error["message"] for error in cache[broken].result().errors] == ["Cannot query field 'nope' on type 'Query'."]


# -- the served schema, customized resolvers, the route helper ---------------------------------------

CUSTOM_POST_RESOLVERS = '''
from service.graphql.resolvers import RepositoryResolvers


class PostResolvers(RepositoryResolvers):
    resource = "posts"

    async def list(self, info, first=15, page=1):
        items = await super().list(info, first=first, page=page)
        return [{**item, "title": item["title"].upper() + "!"} for item in items]
'''


def with_resolvers(restify: Restify, tmp_path: Path) -> GraphQLConfig:
    """Output in tmp_path/gql: no schema file (built in memory), a customized resolvers/post.py."""
    (tmp_path / "gql" / "resolvers").mkdir(parents=True)
    (tmp_path / "gql" / "resolvers" / "post.py").write_text(CUSTOM_POST_RESOLVERS)
    return GraphQLConfig({"output": {"path": str(tmp_path / "gql")}}, app_dir=ROOT)


def without_generated_files(restify: Restify, tmp_path: Path) -> GraphQLConfig:
    return GraphQLConfig({"output": {"path": str(tmp_path / "empty")}}, app_dir=ROOT)


def with_tags_only_schema(restify: Restify, tmp_path: Path) -> GraphQLConfig:
    """A schema file named api.graphql in tmp_path/api, generated for the tags repository only."""
    (tmp_path / "api").mkdir()
    text = render(restify.registry, GraphQLConfig({"repositories": {"include": ["tags"]}}, app_dir=ROOT))
    (tmp_path / "api" / "api.graphql").write_text(text)
    return GraphQLConfig({"output": {"path": str(tmp_path / "api"), "schema_file": "api.graphql"}}, app_dir=ROOT)


@pytest.mark.parametrize("app", [serving(with_resolvers)], indirect=True)
async def test_a_customized_resolver_file_is_used(api, db):
    id = await seed_post(db, "Hello")
    assert await run(api, "{ postList { title } }") == {"data": {"postList": [{"title": "HELLO!"}]}}
    assert await run(api, f'{{ post(id: "{id}") {{ title }} }}') == {"data": {"post": {"title": "Hello"}}}


@pytest.mark.parametrize("app", [serving(without_generated_files)], indirect=True)
async def test_without_generated_files_the_schema_is_built_in_memory_with_built_in_resolvers(api, db, graphql):
    id = await seed_post(db, "Hello")
    assert await run(api, f'{{ postList {{ id title }} post(id: "{id}") {{ title }} }}') == {
        "data": {"postList": [{"id": id, "title": "Hello"}], "post": {"title": "Hello"}}}
    assert not graphql.config.output_dir.exists()


@pytest.mark.parametrize("app", [serving(with_tags_only_schema)], indirect=True)
async def test_the_schema_file_served_is_the_one_the_config_names(api, db):
    await seed(db, "tags", name="news")
    assert await run(api, "{ tagList { name } }") == {"data": {"tagList": [{"name": "news"}]}}
    assert await run(api, "{ postList { id } }") == {"errors": [
        invalid("Cannot query field 'postList' on type 'Query'. Did you mean 'tagList'?", 3)]}


async def test_the_app_factory_serves_the_checked_in_schema_whose_resolvers_load(graphql):
    assert graphql.config.schema_path == ROOT / "schema" / "schema.graphql"
    assert print_schema(graphql.endpoint.schema) + "\n" == (ROOT / "schema" / "schema.graphql").read_text()
    assert {name: cls.__name__ for name, cls in load_resolver_classes(ROOT / "schema" / "resolvers").items()} == {
        "comments": "CommentResolvers", "posts": "PostResolvers", "tags": "TagResolvers", "users": "UserResolvers"}


@pytest.mark.parametrize("app", [lambda restify, tmp_path: Application(graphql_routes(restify, path="/graph"))],
                         indirect=True)
async def test_graphql_routes_adds_the_endpoint_to_an_application_an_author_composes(api, db):
    await seed_post(db, "Hello")
    response = await api.post("/graph", {"query": "{ postList { title } }"})
    assert (response.status, response.json) == (200, {"data": {"postList": [{"title": "Hello"}]}})


async def test_graphql_reads_ask_the_policy_only_what_they_show(api, db, monkeypatch):
    # GraphQL's types carry no authorization flags: a record is asked whether it may be shown, not whether
    # it may be updated or deleted; REST, whose records carry the flags, asks.
    from repositories.policies import OwnedPolicy
    asked: list[str] = []
    for action in ("update", "delete"):
        declared = getattr(OwnedPolicy, action)
        monkeypatch.setattr(OwnedPolicy, action,
                            lambda self, user, record, declared=declared, action=action:
                            asked.append(action) or declared(self, user, record))
    ids = [await seed_post(db, f"p{n}") for n in range(3)]
    assert await run(api, "{ postList { title } }") == {"data": {"postList": [{"title": f"p{n}"} for n in range(3)]}}
    assert await run(api, "query($id: ID!) { post(id: $id) { title version } }", {"id": ids[0]}) == \
        {"data": {"post": {"title": "p0", "version": 0}}}
    assert asked == []
    rest = await api.get(POSTS)
    assert [item["meta"]["authorizedToUpdate"] for item in rest.json["data"]] == [False] * 3
    assert asked == ["update", "delete"] * 3
