"""Search and sort through a BelongsTo relation on GraphQL: `postList`/`postPage` take the
same `search` and `sort` as REST, read by the same operation, within the users' own read rules."""
from tests.graphql.test_endpoint import run
from tests.http.test_relation_query import people, posts  # noqa: F401  (fixtures)

LIST = 'query($s: String, $o: String) { postList(first: 20, search: $s, sort: $o) { title } }'
PAGE = ('query($o: String, $c: Count) { postPage(first: 4, page: 2, sort: $o, count: $c) '
        '{ data { title } meta { total lastPage currentPage } } }')


async def titles(api, token, **variables) -> list[str]:
    body = await run(api, LIST, variables, token=token)
    assert "errors" not in body, body
    return [post["title"] for post in body["data"]["postList"]]


async def test_post_list_searches_the_authors_name_and_sorts_by_it(api, ann, posts):
    assert await titles(api, ann["token"], s="bo", o="title") == ["b1", "b2"]
    assert await titles(api, ann["token"], o="user.name,-views") == \
        ["a2", "a3", "a1", "b1", "b2", "z1", "z2", "o2", "m1", "o1"]
    assert await titles(api, None, s="bob") == []  # guests may not see users: no author name matches


async def test_post_page_sorts_by_the_authors_name_with_and_without_a_count(api, ann, posts):
    body = await run(api, PAGE, {"o": "user.name"}, token=ann["token"])
    assert body["data"]["postPage"] == {"data": [{"title": "b2"}, {"title": "z1"}, {"title": "z2"}, {"title": "o1"}],
                                        "meta": {"total": 10, "lastPage": 3, "currentPage": 2}}
    body = await run(api, PAGE, {"o": "user.name", "c": "NONE"}, token=ann["token"])
    assert body["data"]["postPage"]["meta"] == {"total": None, "lastPage": None, "currentPage": 2}
    bad = await run(api, PAGE, {"o": "views,user.name"}, token=ann["token"])
    assert bad["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
