"""A repository's `per_page` is GraphQL's page size too (as on REST and MCP): the default of `first`
on `<type>List` and `<type>Page`, what a list without `first` returns, and what the cost estimate
counts; repositories without one keep the schema's `default_first`."""
import pytest

from service.console.application import make_app
from service.graphql.config import GraphQLConfig
from service.graphql.generator import render
from service.graphql.service import GraphQLService
from tests.graphql.test_endpoint import refused, run
from tests.http.test_index_queries import (  # noqa: F401  (config, registry: fixtures)
    POSTS, add_line, cap, config, registry, seed_posts, url)

PER_PAGE = 4
pytestmark = pytest.mark.parametrize("registry", [[add_line("posts.py", "class PostRepository(Repository):\n",
                                                            f"    per_page = {PER_PAGE}")]], indirect=True)


@pytest.fixture
def max_cost():
    return 5000


@pytest.fixture
def app(restify, tmp_path, max_cost):
    """The factory's app, with GraphQL built in memory from the edited repositories."""
    config = GraphQLConfig({"schema": {"max_cost": max_cost}}, app_dir=tmp_path)
    return make_app(restify, graphql=GraphQLService(restify, config))


async def test_a_list_without_first_has_the_repositorys_page_size(api, db):
    await seed_posts(db, *(f"p{i}" for i in range(10)))
    body = await run(api, "{ postList { title } postPage { data { title } meta { perPage lastPage } } }")
    assert "errors" not in body, body
    assert len(body["data"]["postList"]) == PER_PAGE
    assert body["data"]["postPage"]["meta"] == {"perPage": PER_PAGE, "lastPage": 3}
    rest = (await api.get(url(POSTS))).json
    assert [p["title"] for p in body["data"]["postPage"]["data"]] == [p["attributes"]["title"] for p in rest["data"]]
    assert rest["meta"]["per_page"] == PER_PAGE


async def test_first_still_chooses_the_size_and_null_takes_the_default(api, db):
    await seed_posts(db, *(f"p{i}" for i in range(10)))
    body = await run(api, "query ($n: Int) { a: postList(first: 7) { id } b: postList(first: $n) { id } }", {"n": None})
    assert "errors" not in body, body
    assert (len(body["data"]["a"]), len(body["data"]["b"])) == (7, PER_PAGE)


@pytest.mark.parametrize("config", [cap(3)], indirect=True)
async def test_the_repositorys_page_size_is_clamped_like_rest(api, db):
    await seed_posts(db, *(f"p{i}" for i in range(10)))
    body = await run(api, "{ postPage { data { id } meta { perPage } } }")
    assert body["data"]["postPage"]["meta"]["perPage"] == 3 == (await api.get(url(POSTS))).json["meta"]["per_page"]


def test_the_schema_shows_each_repositorys_default(registry, tmp_path):
    fields = {line.strip().partition("(")[0]: line for line in render(registry, GraphQLConfig(app_dir=tmp_path))
              .splitlines() if "(" in line}
    assert f"first: Int = {PER_PAGE}," in fields["postList"] and f"first: Int = {PER_PAGE}," in fields["postPage"]
    assert "first: Int = 15," in fields["commentList"]  # no per_page: the schema's default_first


@pytest.mark.parametrize("max_cost", [1])
@pytest.mark.parametrize("query, cost", [("{ postList { id } }", 2 * PER_PAGE), ("{ commentList { id } }", 2 * 15)])
async def test_the_cost_estimate_counts_the_repositorys_page_size(api, query, cost):
    assert await run(api, query) == refused(f"The query costs {cost}, more than the limit of 1.", "QUERY_TOO_COSTLY")
