"""A GraphQL filter input that takes booleans as text (graphql.toml maps `boolean` to String) reads
them as every door does (`description.to_boolean`): "1" and "true" once were refused there, as
anything but a real boolean was."""
import pytest

from service.console.application import make_app
from service.graphql.config import GraphQLConfig
from service.graphql.generator import render
from service.graphql.service import GraphQLService
from tests.booleans import REFUSED_TEXTS, TEXTS
from tests.graphql.test_endpoint import run
from tests.graphql.test_filters import bad_request
from tests.graphql.test_generator import members
from tests.http.test_index_queries import registry, seed_post  # noqa: F401  (registry: a fixture)

TEXT = GraphQLConfig({"types": {"boolean": "String"}})
LIST = "query ($filter: PostFilter) { postList(first: 100, filter: $filter) { title } }"


@pytest.fixture
def app(restify, tmp_path):
    return make_app(restify, graphql=GraphQLService(restify, GraphQLConfig(TEXT.values, app_dir=tmp_path)))


def test_a_boolean_written_as_text_has_a_text_filter(registry):
    text = render(registry, TEXT)
    assert "published: StringBooleanFilter" in members(text, "input", "PostFilter")
    assert members(text, "input", "StringBooleanFilter") == ["eq: String", "isNull: Boolean", "ne: String"]


@pytest.mark.parametrize("text, expected", TEXTS)
async def test_the_text_filter_reads_a_boolean_as_every_door_does(api, db, text, expected):
    await seed_post(db, "Out", published=True)
    await seed_post(db, "Draft", published=False)
    body = await run(api, LIST, {"filter": {"published": {"eq": text}}})
    assert body == {"data": {"postList": [{"title": "Out" if expected else "Draft"}]}}


@pytest.mark.parametrize("text", REFUSED_TEXTS)
async def test_the_text_filter_refuses_what_every_door_refuses(api, text):
    message = "The filter.published.ne filter must be true or false."
    bad_request(await run(api, LIST, {"filter": {"published": {"ne": text}}}), "postList", "filter.published.ne",
                message)
