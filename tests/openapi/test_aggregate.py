"""`GET <r>/aggregate` in the OpenAPI document: on the repositories that declare group keys or metrics,
its parameters, and an answer of the real route that its schema accepts."""
import pytest
from jsonschema import Draft202012Validator

from service.config import Settings
from service.core.declarations.registry import load_app
from service.openapi import build_document
from tests.conftest import ROOT
from tests.http.test_aggregate import posts  # noqa: F401  (a fixture)

PREFIX = "/api/restify"


@pytest.fixture(scope="module")
def document():
    return build_document(load_app(ROOT), Settings(app_dir=ROOT))


def test_only_repositories_with_group_keys_or_metrics_offer_it(document):
    assert [path for path in document["paths"] if path.endswith("/aggregate")] == [f"{PREFIX}/posts/aggregate"]


def test_its_parameters_are_the_aggregations_and_the_index_filters(document):
    operation = document["paths"][f"{PREFIX}/posts/aggregate"]["get"]
    names = [p["name"] for p in operation["parameters"]]
    assert names[:4] == ["group", "metrics", "sort", "search"]
    assert {"views", "views[gte]", "published", "user_id[in]"} <= set(names)
    assert not {"page", "perPage", "cursor", "count", "fields"} & set(names)
    group = next(p for p in operation["parameters"] if p["name"] == "group")
    assert group["description"].startswith("Comma-separated group keys: created_at, published, updated_at, user_id;")


async def test_a_real_answer_matches_its_schema(api, document, posts):
    schema = document["components"]["schemas"]["posts.Aggregation"]
    for query in ("group=user_id,published,created_at:week&metrics=count,sum:views,avg:views,min:views,max:views",
                  "metrics=count"):
        body = (await api.get(f"{PREFIX}/posts/aggregate?{query}")).json
        Draft202012Validator(schema).validate(body)  # it refers to nothing else
