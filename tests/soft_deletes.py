"""The demo's posts with `soft_deletes = True`, for one test; GraphQL's schema is then built from the
repositories (not read from schema/schema.graphql, which has no soft deletes)."""
import pytest

from service.graphql.config import GraphQLConfig

PREFIX = "/api/restify"


@pytest.fixture
def soft_posts(monkeypatch, tmp_path, registry):
    """Request it before `api`."""
    monkeypatch.setattr(type(registry.get("posts").repository), "soft_deletes", True)
    monkeypatch.setattr(GraphQLConfig, "schema_path", property(lambda self: tmp_path / "absent.graphql"))


async def created_post(api, token: str, **values) -> dict:
    response = await api.post(f"{PREFIX}/posts", {"title": "Hello", **values}, token=token)
    assert response.status == 201, response.body
    return response.json["data"]


async def trashed_post(api, token: str, **values) -> dict:
    post = await created_post(api, token, **values)
    response = await api.delete(f"{PREFIX}/posts/{post['id']}", token=token)
    assert response.status == 204, response.body
    return post
