"""A list of plain fields is answered without graphql-core's executor, planned once per document; the
answers are graphql-core's own, errors included. Each query runs twice over HTTP: with direct lists,
then with them turned off (every document through the executor), and the two bodies must be equal."""
import pytest

from tests.graphql.test_endpoint import app, config, graphql, run  # noqa: F401 - fixtures
from tests.http.test_index_queries import seed_post

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


async def _both(api, graphql, query, variables, operation_name):  # noqa: F811 - the fixture
    extra = {"operationName": operation_name} if operation_name else {}
    direct = await run(api, query, variables, **extra)
    endpoint = graphql.endpoint
    prepared = endpoint._cache[query].result()
    lists, endpoint.direct_lists = endpoint.direct_lists, {}
    endpoint._cache.clear()
    try:
        general = await run(api, query, variables, **extra)
    finally:
        endpoint.direct_lists = lists
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
