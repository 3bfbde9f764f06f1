"""Filters through relations on REST: `user.name[op]=v` (the demo's `posts.user` is `.filterable("name")`)
and `has=` / `-has=` (posts' comments and tags), within the related repositories' own read rules."""
import json
from urllib.parse import quote

import pytest

from tests.http.test_index_queries import bad_request, seed
from tests.http.test_relation_query import POSTS, page, people, posts  # noqa: F401  (fixtures)
from tests.policy_rules import rules  # noqa: F401  (a fixture)


@pytest.fixture
def talk(db, posts, people, io_loop):
    """Comments on a1, b1 and z1 (two on a1); tags on a2 and b2: name -> id."""
    async def make():
        for title in ("a1", "a1", "b1", "z1"):
            await seed(db, "comments", body=f"on {title}", post_id=posts[title], user_id=people["Ann"])
        tags = {name: await seed(db, "tags", name=name) for name in ("news", "misc")}
        await db.collection("posts").update(posts["a2"], {"tag_ids": [tags["news"]]})
        await db.collection("posts").update(posts["b2"], {"tag_ids": [tags["news"], tags["misc"]]})
        return tags
    return io_loop.run_sync(make)


async def titles_of(api, token, query):
    return (await page(api, token, f"{query}&sort=title"))[0]


async def test_a_parents_field_filters_with_any_operator_it_allows(api, ann, posts):
    token = ann["token"]
    assert await titles_of(api, token, "user.name=Ann") == ["a1", "a2", "a3"]
    assert await titles_of(api, token, "user.name[eq]=Ann") == ["a1", "a2", "a3"]
    assert await titles_of(api, token, "user.name[in]=Bob,Zoe") == ["b1", "b2", "z1", "z2"]
    assert await titles_of(api, token, "user.name[nin]=Ann,Zoe") == ["b1", "b2"]
    # -user.name: records whose parent is one of the others; a post with no author has no such parent
    assert await titles_of(api, token, "-user.name=Ann") == ["b1", "b2", "z1", "z2"]
    assert await titles_of(api, token, "user.name=Ann&views[gte]=5") == ["a2", "a3"]  # AND with the rest
    titles, meta = await page(api, token, "user.name=Ann&perPage=2&sort=title")
    assert (titles, meta["total"]) == (["a1", "a2"], 3)


async def test_has_and_not_has(api, ann, posts, talk):
    token = ann["token"]
    assert await titles_of(api, token, "has=comments") == ["a1", "b1", "z1"]
    assert await titles_of(api, token, "-has=comments") == ["a2", "a3", "b2", "m1", "o1", "o2", "z2"]
    assert await titles_of(api, token, "has=tags") == ["a2", "b2"]
    assert await titles_of(api, token, "has=comments,tags") == []
    assert await titles_of(api, token, "-has=comments,tags") == ["a3", "m1", "o1", "o2", "z2"]
    assert await titles_of(api, token, "has=comments&user.name=Ann") == ["a1"]


async def test_the_filter_object_holds_them_too(api, ann, posts, talk):
    token = ann["token"]
    given = {"any": [{"user": {"name": {"eq": "Zoe"}}}, {"has": "tags"}]}
    assert await titles_of(api, token, f"filter={quote(json.dumps(given))}") == ["a2", "b2", "z1", "z2"]
    given = {"not": {"user": {"name": {"in": ["Ann", "Bob"]}}}, "hasNot": ["comments"]}
    assert await titles_of(api, token, f"filter={quote(json.dumps(given))}") == ["m1", "o1", "o2", "z2"]


async def test_only_what_the_user_may_see_matches(api, rules, ann, posts, talk):
    # Guests may not see users (the demo's scope): no author matches for them, and no post either.
    assert await titles_of(api, None, "user.name=Ann") == []
    rules("users", scope=lambda user: {"name": {"ne": "Bob"}})
    assert await titles_of(api, ann["token"], "user.name[in]=Ann,Bob") == ["a1", "a2", "a3"]
    rules("users", scope=lambda user: True, show=lambda user, record: record.name != "Zoe")
    assert await titles_of(api, ann["token"], "user.name=Zoe") == []
    rules("comments", scope=lambda user: {"body": {"ne": "on b1"}})
    assert await titles_of(api, ann["token"], "has=comments") == ["a1", "z1"]


async def test_bad_relation_filters_are_400s_naming_them(api, rules, ann, posts):
    token = ann["token"]
    cases = {
        "user.email=a": ("user.email", "The field 'user.email' cannot be filtered; the filterable fields are: "
                                       "user.name."),
        "comments.body=a": ("comments.body", "The relation 'comments' cannot be filtered through; the relations "
                                             "that can are: user."),
        "nope.name=a": ("nope.name", "The relation 'nope' cannot be filtered through; the relations that can are: "
                                     "user."),
        "has=nope": ("has", "The relation 'nope' is not one has takes; it takes: comments, tags."),
        "has=user": ("has", "The relation 'user' is not one has takes; it takes: comments, tags."),
        "user.name[regex]=A": ("user.name[regex]", "The filter operator 'regex' is not allowed on the field "
                                                   "'user.name'; it takes eq, ne, in, nin, null."),
        "has[ne]=comments": ("has[ne]", "The has parameter takes no operator: has=<relations> or -has=<relations>."),
    }
    for query, (where, message) in cases.items():
        response = await api.get(f"{POSTS}?{query}", token=token)
        bad_request(response, message, {where: [message]})
    for query in ("user.name[$ne]=x", "user.$where=1", "user.name.first=x", "user[name]=x", "views.gt=1"):
        response = await api.get(f"{POSTS}?{query}", token=token)
        assert response.status == 400, (query, response.body)
    given = quote(json.dumps({"user": {"email": {"eq": "a"}}}))
    message = "The field 'email' cannot be filtered; the filterable fields are: all, any, name, not."
    bad_request(await api.get(f"{POSTS}?filter={given}", token=token), message, {"filter.user.email": [message]})
    given = quote(json.dumps({"user": {"name": {"$ne": "a"}}}))
    response = await api.get(f"{POSTS}?filter={given}", token=token)
    assert response.status == 400 and "filter.user.name.$ne" in response.json["errors"]


async def test_a_relation_the_user_may_not_read_is_a_400(api, rules, ann, posts):
    rules("users", allow_restify=lambda user: False)
    message = "The filter through 'user' reads users, which this user may not read."
    given = quote(json.dumps({"not": {"user": {"name": {"eq": "Ann"}}}}))
    bad_request(await api.get(f"{POSTS}?filter={given}", token=ann["token"]), message, {"filter.not.user": [message]})
    bad_request(await api.get(f"{POSTS}?user.name=Ann", token=ann["token"]), message, {"user": [message]})


async def test_reading_too_many_related_records_is_a_400(api, ann, posts, talk, restify):
    restify.settings.set("query", "max_relation_sort", 2)
    message = "The has comments reads more than 2 comments records (query.max_relation_sort); narrow it down."
    bad_request(await api.get(f"{POSTS}?has=comments", token=ann["token"]), message, {"has": [message]})


async def test_a_cursor_walk_keeps_its_relation_filter(api, ann, posts):
    response = await api.get(f"{POSTS}?user.name=Ann&cursor=&perPage=2", token=ann["token"])
    assert response.status == 200, response.body
    first = [row["attributes"]["title"] for row in response.json["data"]]
    following = quote(response.json["meta"]["next_cursor"])
    response = await api.get(f"{POSTS}?user.name=Ann&cursor={following}&perPage=2", token=ann["token"])
    assert response.status == 200, response.body
    rest = [row["attributes"]["title"] for row in response.json["data"]]
    assert sorted(first + rest) == ["a1", "a2", "a3"]


@pytest.mark.parametrize("query", ["user.name=Ann", "user.name[in]=Ann,Bob&published=false", "has=comments",
                                   "-has=comments&user.name=Zoe", f"filter={quote(json.dumps({'not': {'has': 'tags'}}))}"])
async def test_an_aggregation_counts_what_the_index_lists_for_each_user(api, rules, ann, posts, talk, query):
    rules("users", scope=lambda user: {"name": {"ne": "Bob"}} if user is not None else False)
    for token in (ann["token"], None):
        listed = (await api.get(f"{POSTS}?{query}&perPage=100", token=token)).json["meta"]["total"]
        response = await api.get(f"{POSTS}/aggregate?{query}&metrics=count", token=token)
        assert response.status == 200, response.body
        counted = sum(group["count"] for group in response.json["data"])
        assert counted == listed


async def test_a_live_feed_refuses_a_relation_filter(api, ann, posts):
    message = "A live feed cannot filter through the relation 'user': one changed record cannot tell whether it " \
              "still matches."
    bad_request(await api.get(f"{POSTS}/events?user.name=Ann", token=ann["token"]), message, {"user": [message]})
    response = await api.get(f"{POSTS}/events?has=comments", token=ann["token"])
    assert response.status == 400 and "'comments'" in response.json["message"], response.body
    given = quote(json.dumps({"any": [{"user": {"name": {"eq": "Ann"}}}]}))
    bad_request(await api.get(f"{POSTS}/events?filter={given}", token=ann["token"]), message,
                {"filter.any.0.user": [message]})
