"""`GET <r>/aggregate`: groups and metrics within the user's scope, the index's filters and search."""
import pytest

from service import field
from service.core.kernel import DeclarationError
from tests.field_policies import field_policies  # noqa: F401  (a fixture)
from tests.http.test_index_queries import seed_post
from tests.policy_rules import own_scope, published_or_own_scope, rules  # noqa: F401  (a fixture)

AGGREGATE = "/api/restify/posts/aggregate"


@pytest.fixture
def posts(db, ann, bob, io_loop):
    """Ann: two published (3 and 12 views) and a draft (5); Bob: a published one (9) and a draft (50),
    written over three months."""
    async def make():
        for title, views, published, owner, stamp in (
                ("Ann one", 3, True, ann, "2024-01-05T10:00:00.000Z"),
                ("Ann two", 12, True, ann, "2024-02-05T10:00:00.000Z"),
                ("Ann draft", 5, False, ann, "2024-02-06T10:00:00.000Z"),
                ("Bob one", 9, True, bob, "2024-02-07T10:00:00.000Z"),
                ("Bob draft", 50, False, bob, "2024-03-01T10:00:00.000Z")):
            await seed_post(db, title, views=views, published=published, user_id=owner["id"], created_at=stamp,
                            updated_at=stamp)
    io_loop.run_sync(make)


async def aggregated(api, query: str, token=None, status=200):
    response = await api.get(f"{AGGREGATE}?{query}", token=token)
    assert response.status == status, response.body
    return response.json


async def test_groups_by_a_field_with_every_metric(api, posts, ann, bob):
    body = await aggregated(api, "group=user_id&metrics=count,sum:views,avg:views,min:views,max:views")
    assert body == {"data": sorted([
        {"group": {"user_id": ann["id"]}, "count": 3, "sum_views": 20, "avg_views": pytest.approx(20 / 3),
         "min_views": 3, "max_views": 12},
        {"group": {"user_id": bob["id"]}, "count": 2, "sum_views": 59, "avg_views": 29.5, "min_views": 9,
         "max_views": 50},
    ], key=lambda row: row["group"]["user_id"]), "meta": {"groups": 2}}


async def test_booleans_group_as_booleans_and_sort_by_a_metric(api, posts):
    body = await aggregated(api, "group=published&metrics=count,sum:views&sort=-sum_views")
    assert body["data"] == [{"group": {"published": False}, "count": 2, "sum_views": 55},
                            {"group": {"published": True}, "count": 3, "sum_views": 24}]


@pytest.mark.parametrize("unit, groups", [
    ("year", [("2024", 5)]),
    ("month", [("2024-01", 1), ("2024-02", 3), ("2024-03", 1)]),
    ("week", [("2024-01-01", 1), ("2024-02-05", 3), ("2024-02-26", 1)]),
    ("day", [("2024-01-05", 1), ("2024-02-05", 1), ("2024-02-06", 1), ("2024-02-07", 1), ("2024-03-01", 1)]),
])
async def test_dates_group_by_unit(api, posts, unit, groups):
    body = await aggregated(api, f"group=created_at:{unit}")
    assert [(row["group"]["created_at"], row["count"]) for row in body["data"]] == groups


async def test_two_keys_and_a_sort_over_the_group(api, posts, ann, bob):
    body = await aggregated(api, "group=user_id,published&sort=-group.published,group.user_id")
    expected = sorted([(ann["id"], True, 2), (bob["id"], True, 1)], key=lambda r: r[0]) + \
        sorted([(ann["id"], False, 1), (bob["id"], False, 1)], key=lambda r: r[0])
    assert [(r["group"]["user_id"], r["group"]["published"], r["count"]) for r in body["data"]] == expected


async def test_no_group_is_one_group_of_everything(api, posts):
    assert await aggregated(api, "metrics=count,sum:views") == {
        "data": [{"group": {}, "count": 5, "sum_views": 79}], "meta": {"groups": 1}}


async def test_filters_and_search_choose_the_records(api, posts):
    body = await aggregated(api, "group=published&views[gte]=5&search=draft")
    assert body["data"] == [{"group": {"published": False}, "count": 2}]


async def test_the_scope_is_in_the_match(api, rules, posts, ann, bob):
    rules("posts", scope=own_scope)
    assert (await aggregated(api, "metrics=count", token=ann["token"]))["data"] == [{"group": {}, "count": 3}]
    assert (await aggregated(api, "metrics=count", token=bob["token"]))["data"] == [{"group": {}, "count": 2}]
    assert (await aggregated(api, "metrics=count"))["data"] == []
    rules("posts", scope=published_or_own_scope)
    body = await aggregated(api, "group=published", token=bob["token"])
    assert body["data"] == [{"group": {"published": False}, "count": 1}, {"group": {"published": True}, "count": 3}]


GROUPABLE = "the groupable fields are: created_at, published, updated_at, user_id."
UNITS = "only a date takes a unit, one of year, month, day, week"
# query -> (the parameter the 400 names, its message; None: the filter's own)
REFUSED = {
    "group=title": ("group", f"The field 'title' cannot be grouped; {GROUPABLE}"),
    "group=nothing": ("group", f"The field 'nothing' cannot be grouped; {GROUPABLE}"),
    "group=user_id:month": ("group", f"The group 'user_id:month' is not allowed: {UNITS} (e.g. user_id:month)."),
    "group=created_at:hour": ("group", f"The group 'created_at:hour' is not allowed: {UNITS} (e.g. created_at:month)."),
    "metrics=sum:title": ("metrics", "The field 'title' cannot be aggregated; the aggregatable fields are: views."),
    "metrics=median:views": ("metrics", "The metric 'median:views' is not one of count, sum:<field>, avg:<field>, "
                                        "min:<field>, max:<field>."),
    "sort=title": ("sort", "The aggregation cannot be sorted by 'title'; it sorts by: count."),
    "views[foo]=1": ("views[foo]", None),
}


@pytest.mark.parametrize("query", REFUSED)
async def test_bad_input_is_a_400_naming_it(api, posts, query):
    where, message = REFUSED[query]
    body = await aggregated(api, query, status=400)
    assert list(body["errors"]) == [where] and body["message"] == (message or body["errors"][where][0])


async def test_more_groups_than_the_setting_is_a_400(api, restify, posts):
    assert len((await aggregated(api, "group=created_at:day"))["data"]) == 5
    restify.settings.set("aggregate", "max_groups", 4)
    body = await aggregated(api, "group=created_at:day", status=400)
    assert body["message"].startswith("The aggregation has more than 4 groups (aggregate.max_groups)")
    assert len((await aggregated(api, "group=created_at:month"))["data"]) == 3


async def test_1001_groups_are_a_400_and_1000_are_answered(api, db):
    async def make(count):
        await db.collection("posts").insert_many(
            [{"title": f"p{n}", "views": n, "published": False, "user_id": f"u{n:04}", "created_at": "2024-01-01",
              "updated_at": "2024-01-01"} for n in range(count)])
    await make(1000)
    assert (await aggregated(api, "group=user_id"))["meta"] == {"groups": 1000}
    await db.collection("posts").insert({"title": "one more", "user_id": "u9999", "created_at": "2024-01-01"})
    body = await aggregated(api, "group=user_id", status=400)
    assert body == {"message": "The aggregation has more than 1000 groups (aggregate.max_groups); group by fewer "
                               "fields, a coarser date unit, or filter the records.",
                    "errors": {"group": ["The aggregation has more than 1000 groups (aggregate.max_groups); group "
                                         "by fewer fields, a coarser date unit, or filter the records."]}}


async def test_a_field_the_user_may_not_see_is_refused_as_unknown(field_policies, api, posts, ann):
    """`views` only its author sees (tests/field_policies.py): nobody may sum it, as nobody may filter on it."""
    body = await aggregated(api, "metrics=sum:views", token=ann["token"], status=400)
    assert body["message"] == "The field 'views' cannot be aggregated; the aggregatable fields are: none."
    assert (await aggregated(api, "group=published", token=ann["token"]))["meta"] == {"groups": 2}


def test_a_hidden_field_cannot_be_a_group_key_or_a_metric():
    with pytest.raises(DeclarationError, match="'secret' is hidden, so it cannot be groupable"):
        field("secret").hidden().groupable()
    with pytest.raises(DeclarationError, match="'pin' is hidden, so it cannot be aggregatable"):
        field("pin").aggregatable().numeric().password()


async def test_a_repository_without_group_keys_or_metrics_has_none(api):
    response = await api.get("/api/restify/tags/aggregate")
    assert response.status == 400
    assert response.json["message"] == "The repository 'tags' declares no groupable or aggregatable fields."
