"""A policy's `scope()` in the query language: operator
expressions inside the query, so pages, totals, show and relation loads see only what the rule admits."""
import logging

import pytest

from service import Policy, any_of
from service.core.declarations.registry import build_registry, load_app
from service.core.kernel.errors import DeclarationError
from tests.conftest import ROOT
from tests.http.test_index_queries import seed, seed_post
from tests.policy_rules import rules  # noqa: F401  (a fixture)
from tests.servers import NO_OBJECT_ID_IN_AGGREGATE

POSTS = "/api/restify/posts"
NOT_FOUND = {"message": "Not found."}


def popular_or_mine(user):
    """Posts with at least 10 views, or the user's own (a guest: the popular ones)."""
    popular = {"views": {"gte": 10}}
    return any_of(popular, {"user_id": user.id}) if user is not None else popular


@pytest.fixture
def posts(db, ann, bob, io_loop):
    async def make():
        made = {}
        for title, views, owner in (("Ann low", 3, ann), ("Ann high", 12, ann), ("Bob low", 9, bob),
                                    ("Bob ten", 10, bob), ("Bob high", 50, bob)):
            made[title] = await seed_post(db, title, views=views, user_id=owner["id"])
        return made
    return io_loop.run_sync(make)


async def listed(api, token=None, query="sort=title"):
    body = (await api.get(f"{POSTS}?{query}", token=token)).json
    return [row["attributes"]["title"] for row in body["data"]], body["meta"]["total"]


async def test_operator_scope_lists_and_counts_only_what_it_admits(api, rules, posts, ann, bob):
    rules("posts", scope=popular_or_mine)
    assert await listed(api) == (["Ann high", "Bob high", "Bob ten"], 3)
    assert await listed(api, ann["token"]) == (["Ann high", "Ann low", "Bob high", "Bob ten"], 4)
    assert await listed(api, bob["token"]) == (["Ann high", "Bob high", "Bob low", "Bob ten"], 4)
    # pages and totals agree: the count is made inside the same query
    assert await listed(api, ann["token"], "sort=title&perPage=3&page=2") == (["Bob ten"], 4)
    assert await listed(api, None, "sort=title&search=low") == ([], 0)


@pytest.mark.parametrize("scope", [
    lambda user: {"id": user.id} if user is not None else False,
    lambda user: {"id": {"in": [user.id]}} if user is not None else False,
    lambda user: any_of({"id": user.id}, {"name": "Nobody"}) if user is not None else False,
], ids=["id", "id-list", "id-or"])
@pytest.mark.embedded_cannot(NO_OBJECT_ID_IN_AGGREGATE)
async def test_a_scope_on_the_id_lists_and_counts_on_every_server(api, rules, ann, bob, scope):
    """Only one's own user record: the index's count holds the id too (it was a 500 on the embedded server)."""
    rules("users", scope=scope)
    for user in (ann, bob):
        response = await api.get("/api/restify/users", token=user["token"])
        assert response.status == 200, response.body
        assert [row["id"] for row in response.json["data"]] == [user["id"]]
        assert response.json["meta"]["total"] == 1
        paged = await api.get("/api/restify/users?cursor=&search=o", token=user["token"])
        assert paged.status == 200 and paged.json["meta"]["total"] == (1 if user is bob else 0)


async def test_a_plain_dict_with_operator_values_is_a_scope_too(api, rules, posts, ann):
    rules("posts", scope=lambda user: {"views": {"between": [9, 12]}, "title": {"nin": ["Bob ten"]}})
    assert await listed(api, ann["token"]) == (["Ann high", "Bob low"], 2)


async def test_show_outside_an_operator_scope_is_a_404(api, rules, posts, ann, bob):
    rules("posts", scope=popular_or_mine)
    assert (await api.get(f"{POSTS}/{posts['Ann low']}", token=ann["token"])).status == 200
    for token in (bob["token"], None):
        response = await api.get(f"{POSTS}/{posts['Ann low']}", token=token)
        assert (response.status, response.json) == (404, NOT_FOUND)
    response = await api.patch(f"{POSTS}/{posts['Bob low']}", {"title": "x"}, token=ann["token"])
    assert (response.status, response.json) == (404, NOT_FOUND)


async def test_relation_loads_obey_an_operator_scope(api, db, rules, posts, ann, bob):
    rules("posts", scope=popular_or_mine)
    comment = await seed(db, "comments", body="On a low post", post_id=posts["Bob low"], user_id=bob["id"])
    shown = (await api.get(f"/api/restify/comments/{comment}?related=post", token=ann["token"])).json
    assert shown["data"]["relationships"] == {"post": []}
    shown = (await api.get(f"/api/restify/comments/{comment}?related=post", token=bob["token"])).json
    assert [p["attributes"]["title"] for p in shown["data"]["relationships"]["post"]] == ["Bob low"]
    # has-many through the users' side: Ann sees her own posts and Bob's popular ones
    body = (await api.get(f"/api/restify/users/{bob['id']}?related=posts", token=ann["token"])).json
    assert sorted(p["attributes"]["title"] for p in body["data"]["relationships"]["posts"]) == ["Bob high", "Bob ten"]


class _UnknownOperator(Policy):
    def scope(self, user):
        return {"views": {"like": 10}}


def test_an_unknown_operator_is_refused_at_start_up_naming_the_policy():
    demo = load_app(ROOT)
    post = demo.get("posts").model
    repositories = [type(r.repository) for r in demo.resources.values()]
    with pytest.raises(DeclarationError, match=r"^_UnknownOperator\.scope\(\): unknown operator 'like' on 'views'"):
        build_registry(repositories, {post: _UnknownOperator})


async def test_an_unknown_operator_met_at_first_use_reads_nothing_and_names_the_policy(api, rules, posts, ann, caplog):
    rules("posts", scope=lambda user: {"views": {"gte": 1}} if user is None else {"user_id": {"is": user.id}})
    with caplog.at_level(logging.ERROR, logger="restify.policies"):
        assert await listed(api, ann["token"]) == ([], 0)
    assert "OwnedPolicy.scope(): unknown operator 'is' on 'user_id'" in caplog.text
