"""Filters with operators and count=none over HTTP.

Posts are seeded straight into the database; the demo app is edited so that `title`, `views`
and a date field `due` are matchable. Every assertion is on exact results or exact error bodies.
"""
import shutil
from urllib.parse import quote

import pytest

from service.core.declarations.registry import load_app
from service.core.kernel.errors import DeclarationError
from tests.http.test_index_queries import (  # noqa: F401  (config, registry: fixtures)
    POSTS, ROOT, bad_request, config, registry, replace, seed, seed_post, titles, url)

MATCHABLE = [
    replace("posts.py", 'field("views").numeric()', 'field("views").numeric().matchable()'),
    replace("posts.py", 'field("title").required()', 'field("title").matchable().required()'),
    replace("posts.py", 'field("body").textarea().nullable(),',
            'field("body").textarea().nullable(),\n            field("due").date().nullable().matchable().sortable(),'),
]
POSTS_SEEDED = (
    ("Zero", 0, "2024-01-01T23:59:59.000Z"),
    ("Five", 5, "2024-01-02T00:00:00.000Z"),
    ("Seven", 7, "2024-01-02T23:59:59.999Z"),
    ("Half", 2.5, "2024-01-03T00:00:00.000Z"),
    ("a,b", 9, None),
)


async def seed_all(db) -> None:
    for title, views, due in POSTS_SEEDED:
        await seed_post(db, title, views=views, **({"due": due} if due else {}))


async def found(api, query: str) -> list[str]:
    return sorted(titles(await api.get(f"{POSTS}?{query}")))


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("query, expected", [
    ("views[eq]=5", ["Five"]),
    ("views[ne]=5", ["Half", "Seven", "Zero", "a,b"]),
    ("-views=5", ["Half", "Seven", "Zero", "a,b"]),
    ("views[gt]=5", ["Seven", "a,b"]),
    ("views[gte]=5", ["Five", "Seven", "a,b"]),
    ("views[lt]=5", ["Half", "Zero"]),
    ("views[lte]=2.5", ["Half", "Zero"]),
    ("views[between]=2.5,7", ["Five", "Half", "Seven"]),
    ("views[in]=0,7,8", ["Seven", "Zero"]),
    ("views[nin]=0,7", ["Five", "Half", "a,b"]),
    ("views[gte]=1&views[lt]=8", ["Five", "Half", "Seven"]),          # filters combine with AND
    ("views[gt]=1&title[in]=Zero,Five,Half", ["Five", "Half"]),
    ("title[in]=a,b", []),                                              # a comma list: "a" or "b"
    ("title[in]=a%2Cb&title[in]=Zero", ["Zero", "a,b"]),                # repeated: values keep their commas
    ("title[nin]=a%2Cb&title[nin]=Zero", ["Five", "Half", "Seven"]),
    ("title[ne]=Zero", ["Five", "Half", "Seven", "a,b"]),
    ("due[null]=true", ["a,b"]),
    ("due[null]=false", ["Five", "Half", "Seven", "Zero"]),
    ("-due=null", ["Five", "Half", "Seven", "Zero"]),
    ("due[between]=2024-01-02,2024-01-02", ["Five", "Seven"]),         # a date-only upper bound: the whole day
    ("due[lte]=2024-01-02", ["Five", "Seven", "Zero"]),
    ("due[lte]=2024-01-02T00:00:00.000Z", ["Five", "Zero"]),            # a date-time bound is exact
    ("due[gt]=2024-01-02", ["Half"]),                                   # after the whole day
    ("due[gte]=2024-01-02&due[lt]=2024-01-03", ["Five", "Seven"]),
    ("published[ne]=true", ["Five", "Half", "Seven", "Zero", "a,b"]),
    ("published[eq]=true", []),
])
async def test_filter_operators_find_exactly_the_matching_records(api, db, query, expected):
    await seed_all(db)
    assert await found(api, query) == expected


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("name, value, message", [
    # The message names what the field takes, as the filter objects' does (it once stopped at the field).
    ("views[like]", "5", "The filter operator 'like' is not allowed on the field 'views'; "
                         "it takes eq, ne, gt, gte, lt, lte, in, nin, between, null."),
    ("views[isNull]", "true", "The filter operator 'isNull' is not allowed on the field 'views'; "
                              "it takes eq, ne, gt, gte, lt, lte, in, nin, between, null."),
    ("title[gt]", "a", "The filter operator 'gt' is not allowed on the field 'title'; it takes eq, ne, in, nin, null."),
    ("published[between]", "0,1", "The filter operator 'between' is not allowed on the field 'published'; "
                                  "it takes eq, ne, null."),
    ("body[eq]", "x", "The field 'body' cannot be filtered; the filterable fields are: due, published, title, user_id, views."),
    ("nope[gt]", "1", "The field 'nope' cannot be filtered; the filterable fields are: due, published, title, user_id, views."),
    ("-body", "x", "The field 'body' cannot be filtered; the filterable fields are: due, published, title, user_id, views."),
    ("-views[gt]", "1", "The filter '-views[gt]' cannot be both negated and given an operator."),
    ("views[gt]", "abc", "The views filter must be a number."),
    ("views[in]", "1,x", "The views filter must be a number."),
    ("views[gt]", "null", "The views filter needs a value to compare with."),
    ("views[between]", "1", "The views[between] filter must be two values: low,high."),
    ("views[between]", "1,2,3", "The views[between] filter must be two values: low,high."),
    ("due[null]", "maybe", "The due[null] filter must be true or false."),
    ("due[lte]", "yesterday", "The due filter must be a date."),
])
async def test_a_bad_filter_is_a_400_naming_it(api, db, name, value, message):
    await seed_all(db)
    errors_key = {"views[between]": "views[between]", "due[null]": "due[null]"}.get(name)
    response = await api.get(url(POSTS, **{name: value}))
    assert response.status == 400, response.body
    assert response.json["message"] == message
    assert list(response.json["errors"].values()) == [[message]]
    if errors_key:
        assert list(response.json["errors"]) == [errors_key]


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
@pytest.mark.parametrize("name", ["views[]", "views[gt][x]", "views[$gt]", "$where", "views]", "[gt]",
                                  "views[GT", "views[g-t]"])
async def test_only_the_exact_bracket_shape_is_read(api, db, name):
    response = await api.get(f"{POSTS}?{quote(name)}=1")
    bad_request(response, f"The query parameter {name!r} is not allowed: operators cannot be sent in a query.",
                {name: ["Operators are not allowed in query parameters."]})


@pytest.mark.parametrize("registry", [MATCHABLE], indirect=True)
async def test_count_none_leaves_out_the_total_and_the_last_page(api, db):
    await seed_all(db)
    path = api.client.get_url(POSTS)
    response = await api.get(url(POSTS, perPage=2, page=2, count="none", **{"views[gte]": 0}))
    assert titles(response) == ["Seven", "Half"]
    meta = response.json["meta"]
    assert (meta["total"], meta["last_page"], meta["current_page"], meta["from"], meta["to"]) == (None, None, 2, 3, 4)
    kept = f"{path}?perPage=2&count=none&views%5Bgte%5D=0&page="
    assert response.json["links"] == {"first": f"{kept}1", "last": None, "prev": f"{kept}1", "next": f"{kept}3",
                                      "path": path}
    last = await api.get(url(POSTS, perPage=2, page=3, count="none"))
    assert titles(last) == ["a,b"] and last.json["links"]["next"] is None and last.json["meta"]["next_cursor"] is None
    exact = await api.get(url(POSTS, perPage=2, count="exact"))
    assert (exact.json["meta"]["total"], exact.json["meta"]["last_page"]) == (5, 3)


async def test_count_must_be_exact_or_none(api):
    bad_request(await api.get(url(POSTS, count="some")), "The count parameter must be exact or none.",
                {"count": ["The count must be exact or none."]})


@pytest.mark.parametrize("name", ["cursor", "count", "fields"])
def test_a_field_with_a_reserved_name_fails_at_start_up(tmp_path, name):
    app_dir = tmp_path / "app"
    shutil.copytree(ROOT / "repositories", app_dir / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    source = app_dir / "repositories" / "tags.py"
    source.write_text(source.read_text().replace('return [field("name")', f'return [field("{name}"), field("name")', 1))
    import sys
    try:
        with pytest.raises(DeclarationError, match=f"field name '{name}' is a reserved query parameter"):
            load_app(app_dir)
    finally:
        if str(app_dir.resolve()) in sys.path:
            sys.path.remove(str(app_dir.resolve()))
        for module in [m for m in sys.modules if m == "repositories" or m.startswith("repositories.")]:
            del sys.modules[module]


async def test_a_reference_filter_finds_ids_in_any_accepted_spelling(api, db):
    """`post_id` refers to posts (`exists:posts`): stored lowercase, found in any case, as `post_id=v` is."""
    mine, theirs = "6650ab" + "0" * 18, "6650ab" + "1" * 18
    for body, post_id in (("On mine", mine), ("On theirs", theirs)):
        await seed(db, "comments", body=body, post_id=post_id, user_id=None)

    async def bodies(query: str) -> list[str]:
        response = await api.get(f"/api/restify/comments?{query}")
        assert response.status == 200, response.body
        return sorted(c["attributes"]["body"] for c in response.json["data"])

    assert await bodies(f"post_id[in]={mine.upper()}") == ["On mine"]
    assert await bodies(f"post_id[ne]={mine.upper()}") == ["On theirs"]
    assert await bodies(f"-post_id={theirs.upper()}") == ["On mine"]


async def test_sparse_fieldset_parameters_are_not_read_as_filters(api, db):
    await seed_post(db, "Kept")
    assert await found(api, "fields[posts]=title") == ["Kept"]
