"""References to other records are stored in one spelling (lowercase hex), so an id the API
accepted in any case finds its relation: `exists:` values and relation keys alike."""
import pytest

from tests.http.test_index_queries import (  # noqa: F401  (config and registry are fixtures)
    POSTS, config, registry, replace, url,
)

COMMENTS = "/api/restify/comments"
NO_EXISTS_RULE = [replace("comments.py", '.storing_rules("required").rules("exists:posts")',
                          '.storing_rules("required")')]


async def related_comment_bodies(api, post_id: str) -> list[str]:
    response = await api.get(url(f"{POSTS}/{post_id}", related="comments"))
    assert response.status == 200, response.body
    return [c["attributes"]["body"] for c in response.json["data"]["relationships"]["comments"]]


async def comment_on(api, ann, post_id_spelling) -> dict:
    response = await api.post(COMMENTS, {"body": "Nice", "post_id": post_id_spelling}, token=ann["token"])
    assert response.status == 201, response.body
    return response.json["data"]


@pytest.mark.parametrize("registry", [(), NO_EXISTS_RULE], indirect=True, ids=["exists-rule", "relation-key"])
@pytest.mark.parametrize("spell", [str.upper, lambda id: id[:12].upper() + id[12:]], ids=["upper", "mixed"])
async def test_a_reference_in_any_case_is_stored_canonical_and_finds_its_relation(api, db, ann, registry, spell):
    post = (await api.post(POSTS, {"title": "Hello"}, token=ann["token"])).json["data"]["id"]
    comment = await comment_on(api, ann, spell(post))
    assert comment["attributes"]["post_id"] == post
    assert (await db.collection("comments").find_by_id(comment["id"]))["post_id"] == post
    assert await related_comment_bodies(api, post) == ["Nice"]
    matched = await api.get(url(COMMENTS, post_id=post))
    assert [c["id"] for c in matched.json["data"]] == [comment["id"]]


async def test_an_update_stores_the_reference_canonical_too(api, db, ann):
    first, second = [(await api.post(POSTS, {"title": t}, token=ann["token"])).json["data"]["id"] for t in "AB"]
    comment = await comment_on(api, ann, first)
    moved = await api.patch(f"{COMMENTS}/{comment['id']}", {"post_id": second.upper()}, token=ann["token"])
    assert moved.status == 200, moved.body
    assert moved.json["data"]["attributes"]["post_id"] == second
    assert await related_comment_bodies(api, second) == ["Nice"]
    assert await related_comment_bodies(api, first) == []


async def test_values_that_are_not_references_keep_their_spelling(api, ann):
    title = "6650ABCDEF0123456789ABCD"  # looks like an id, but a title is text
    created = await api.post(POSTS, {"title": title}, token=ann["token"])
    assert created.json["data"]["attributes"]["title"] == title


async def test_a_filter_on_a_reference_finds_it_in_any_case(api, ann):
    post = (await api.post(POSTS, {"title": "Hello"}, token=ann["token"])).json["data"]["id"]
    await comment_on(api, ann, post)
    for spelling in (post, post.upper()):
        response = await api.get(url(COMMENTS, post_id=spelling))
        assert (response.status, [c["attributes"]["post_id"] for c in response.json["data"]]) == (200, [post])
