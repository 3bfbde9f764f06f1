"""A list of plain fields, and a record with its plain relation lists, are answered without graphql-core's
executor, planned once per document; the answers are graphql-core's own, errors included. Each query runs
twice over HTTP: answered directly, then with direct answers turned off (every document through the
executor), and the two bodies must be equal."""
import pytest

from service.graphql.direct import answers_directly
from service.graphql.resolvers import RepositoryResolvers
from tests.graphql.test_endpoint import app, config, graphql, run  # noqa: F401 - fixtures
from tests.http.test_index_queries import seed, seed_post

PLAIN = "{ postList(first: 3) { id title views published created_at } }"
CASES = [
    (PLAIN, None, None),
    ("{ posts: postList(sort: \"-views\") { key: id title again: views } }", None, None),
    # Records written on one level straight from the stored documents: the version and the timestamps too.
    ("{ postList { version id updated_at body version_again: version } }", None, None),
    ("query Named($n: Int, $f: PostFilter) { postList(first: $n, filter: $f) { id title } }",
     {"n": 2, "f": {"views": {"gte": 2}}}, "Named"),
    ("query($s: String) { postList(search: $s, sort: \"title\") { title } }", {"s": "ba"}, None),
    # Arguments the document alone gives are kept with its plan; variables it does not declare are ignored.
    ("{ postList(first: 2, sort: \"-title\", search: \"a\") { title } }", {"unused": 1}, None),
    # Refused before anything runs: the executor words these.
    ("query($n: Int) { postList(first: $n) { id } }", {"n": "many"}, None),
    ("query Named { postList { id } }", None, "Other"),
    # Refused by the operation: the error of a non-null root field, no data.
    REFUSED := ("{ postList(sort: \"nope\") { id } }", None, None),
    ("{ postList(filter: {views: {between: [1]}}) { id } }", None, None),
    # A stored value the scalar refuses: the records go through the executor, which reports it.
    ODD := ("{ postList(sort: \"title\") { title views } }", None, None),
]


async def _posts(db) -> None:
    for title, views in (("alpha", 1), ("bravo", 2), ("banana", 3), ("delta", 4)):
        await seed_post(db, title, views=views)


async def _both(api, graphql, query, variables, operation_name, token=None):  # noqa: F811 - the fixture
    extra = {"operationName": operation_name} if operation_name else {}
    extra["token"] = token
    direct = await run(api, query, variables, **extra)
    endpoint = graphql.endpoint
    prepared = endpoint._cache[query].result()
    lists, endpoint.direct_lists = endpoint.direct_lists, {}
    shows, endpoint.direct_shows = endpoint.direct_shows, {}
    endpoint._cache.clear()
    try:
        general = await run(api, query, variables, **extra)
    finally:
        endpoint.direct_lists, endpoint.direct_shows = lists, shows
        endpoint._cache.clear()
    return prepared, direct, general


@pytest.mark.parametrize("query, variables, operation_name", CASES)
async def test_a_plain_list_answers_as_graphql_core_would(api, graphql, db, query, variables,  # noqa: F811
                                                          operation_name):
    await _posts(db)
    if "views" in query and "title views" in query:
        await seed_post(db, "zulu", views="many")
    prepared, direct, general = await _both(api, graphql, query, variables, operation_name)
    assert direct == general
    assert prepared.direct is not None  # every case here is planned; some are then answered by the executor


async def test_the_cases_see_data_and_each_kind_of_error(api, graphql, db):  # noqa: F811
    await _posts(db)
    _, direct, _ = await _both(api, graphql, *CASES[0])
    assert [p["title"] for p in direct["data"]["postList"]] == ["alpha", "bravo", "banana"]
    _, refused, _ = await _both(api, graphql, *REFUSED)
    assert refused["data"] is None and refused["errors"][0]["path"] == ["postList"]
    assert refused["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    await seed_post(db, "zulu", views="many")
    _, odd, _ = await _both(api, graphql, *ODD)
    assert odd["data"]["postList"][-1] == {"title": "zulu", "views": None}
    assert "Long cannot represent" in odd["errors"][0]["message"]


async def test_long_values_are_written_as_graphql_core_writes_them(api, graphql, db):  # noqa: F811
    for title, views in (("a big one", 2 ** 40), ("a float", 7.0), ("a negative", -5), ("the largest", 2 ** 63 - 1)):
        await seed_post(db, title, views=views)
    _, direct, general = await _both(api, graphql, "{ postList(sort: \"title\") { title views } }", None, None)
    assert direct == general == {"data": {"postList": [
        {"title": "a big one", "views": "1099511627776"}, {"title": "a float", "views": "7"},
        {"title": "a negative", "views": "-5"}, {"title": "the largest", "views": "9223372036854775807"}]}}


@pytest.mark.parametrize("query", [
    "{ postList { id user { name } } }",               # a relation field
    "{ postList { ...F } } fragment F on Post { id }",  # a fragment
    "{ postList { id __typename } }",
    "{ postList { id @include(if: true) } }",
    "{ postList { id } postPage { meta { total } } }",  # two root fields
    "{ postPage { data { id } } }",
])
async def test_anything_else_goes_through_the_executor(api, graphql, db, query):  # noqa: F811
    await _posts(db)
    body = await run(api, query)
    assert "errors" not in body, body
    assert graphql.endpoint._cache[query].result().direct is None


async def test_a_list_of_a_model_with_eager_relations_answers_as_graphql_core_would(api, graphql, db, registry,  # noqa: F811
                                                                                   monkeypatch):
    # Its records are loaded with their relations, so they stay resource objects: the rows are written from those.
    monkeypatch.setattr(registry.get("posts").model, "eager", ("user",))
    await _posts(db)
    prepared, direct, general = await _both(api, graphql, "{ postList { id title body views } }", None, None)
    assert prepared.direct is not None
    assert direct == general
    assert [p["title"] for p in direct["data"]["postList"]] == ["alpha", "bravo", "banana", "delta"]


# -- a record with its plain relation lists ----------------------------------------------------------

async def _post_with_relations(db, user: str | None = None, comments: int = 3, **values) -> str:
    tags = [await seed(db, "tags", name=name) for name in ("red", "blue")]
    post = await seed_post(db, "Hello", body="Text", views=7, user_id=user, tag_ids=tags, **values)
    for n in range(comments):
        await seed(db, "comments", body=f"c{n:02}", post_id=post, user_id=user)
    return post


SHOW = "query($id: ID!) { post(id: $id) { id title comments { id body } tags { id name } } }"
SHOWS = [
    SHOW,
    # Relation fields before plain ones, a single one, aliases, the same field twice under two names.
    'query($id: ID!) { p: post(id: $id) { c: comments { b: body again: body } t: title user { name } views } }',
    # The relation field's default `first` cuts the related list (more comments than it).
    "query($id: ID!) { post(id: $id) { comments { body } } }",
    'query Named($id: ID!) { post(id: $id) { title tags { name } } }',
    # One relation written twice: the budget counts both places.
    'query($id: ID!) { post(id: $id) { comments { body } c: comments { id } } }',
]


@pytest.mark.parametrize("query", SHOWS)
async def test_a_record_with_plain_relations_answers_as_graphql_core_would(api, graphql, db, ann, query):  # noqa: F811
    post = await _post_with_relations(db, ann["id"], comments=20)
    prepared, direct, general = await _both(api, graphql, query, {"id": post}, None, ann["token"])
    assert direct == general
    assert "errors" not in direct, direct
    assert prepared.direct is not None and not prepared.direct.many


async def test_a_shown_record_has_its_relations_in_the_selections_order(api, graphql, db, ann):  # noqa: F811
    post = await _post_with_relations(db, ann["id"])
    body = await run(api, SHOWS[1], {"id": post}, token=ann["token"])
    assert body == {"data": {"p": {
        "c": [{"b": f"c{n:02}", "again": f"c{n:02}"} for n in range(3)], "t": "Hello", "user": {"name": "Ann"},
        "views": "7"}}}
    assert list(body["data"]["p"]) == ["c", "t", "user", "views"]
    for n in range(3, 20):
        await seed(db, "comments", body=f"c{n:02}", post_id=post, user_id=None)
    shown = await run(api, SHOWS[2], {"id": post})
    assert shown == {"data": {"post": {"comments": [{"body": f"c{n:02}"} for n in range(15)]}}}


@pytest.mark.parametrize("query, variables", [
    # Refused by the operation: a nullable root field is null beside the error.
    (SHOW, {"id": "0" * 24}),
    ('{ post(id: "%s") { id title } }' % ("0" * 24), None),  # the arguments kept with the plan
    # Refused before anything runs: the executor words it.
    (SHOW, {"id": ["not", "an", "id"]}),
    ("query($id: ID!) { post(id: $id) { user { name } title } }", "no user"),
    # A related value the scalar refuses: the record goes through the executor, which reports it.
    ("query($id: ID!) { post(id: $id) { title comments { body } } }", "odd comment"),
])
async def test_a_shown_record_errs_as_graphql_core_would(api, graphql, db, query, variables):  # noqa: F811
    if variables == "no user":
        variables = {"id": await seed_post(db, "Alone")}
    elif variables == "odd comment":
        variables = {"id": await _post_with_relations(db)}
        await seed(db, "comments", body={"not": "text"}, post_id=variables["id"], user_id=None)
    _, direct, general = await _both(api, graphql, query, variables, None)
    assert direct == general
    if variables == {"id": "0" * 24} or variables is None:
        assert direct["data"] == {"post": None} and direct["errors"][0]["extensions"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("query", [
    'query($id: ID!) { post(id: $id) { comments(first: 2) { body } } }',  # a relation field's argument
    'query($id: ID!) { post(id: $id) { comments { user { name } } } }',   # two levels of relations
    'query($id: ID!) { post(id: $id) { comments { ...C } } } fragment C on Comment { body }',
    'query($id: ID!) { post(id: $id) { tags { __typename } } }',
])
async def test_other_shows_go_through_the_executor(api, graphql, db, query):  # noqa: F811
    post = await _post_with_relations(db)
    body = await run(api, query, {"id": post})
    assert "errors" not in body, body
    assert graphql.endpoint._cache[query].result().direct is None


@pytest.mark.parametrize("method", ["list", "listed", "show", "shown", "context", "_plan", "_relatable", "relatable"])
def test_resolvers_that_override_a_method_on_the_way_keep_the_executor(restify, method):
    class Customized(RepositoryResolvers):
        pass
    setattr(Customized, method, lambda self, *args, **kwargs: None)
    assert answers_directly(RepositoryResolvers(restify))
    assert not answers_directly(Customized(restify))
