"""Aggregations' pipeline (storage/grouping.py) on the server the suite runs on, and the embedded
server's facts it is shaped by: a `$group` `_id` is one expression (an object or an array of keys is
not evaluated), `$substr` of a text is, `$toDate` is not."""
import pymongo
import pytest

from storage import Filter, GroupKey, Metric, among
from tests.servers import EMBEDDED_SERVER

ROWS = [
    {"user": "a", "flag": True, "views": 3, "at": "2024-01-05T10:00:00.000Z"},
    {"user": "a", "flag": False, "views": 5, "at": "2024-02-05T10:00:00.000Z"},
    {"user": "b", "flag": True, "views": 7, "at": "2024-02-06T10:00:00.000Z"},
    {"user": "b", "views": 1.5, "at": "2024-02-11T11:00:00.000Z"},
    {"user": None, "flag": True, "at": None},
]
COUNT = (Metric("count"),)
EVERY = [Metric("count"), Metric("sum", "views"), Metric("avg", "views"), Metric("min", "views"),
         Metric("max", "views")]


@pytest.fixture
def rows(io_loop, db):
    io_loop.run_sync(lambda: db.collection("rows").insert_many(ROWS))
    return db.collection("rows")


def grouped(io_loop, rows, keys, metrics=COUNT, where: Filter | None = None, most=100) -> dict:
    found = io_loop.run_sync(lambda: rows.group(where or Filter(), keys, list(metrics), most))
    return dict(found)


def test_one_key_with_every_metric(io_loop, rows):
    assert grouped(io_loop, rows, [GroupKey("user")], EVERY) == {
        ("a",): {"count": 2, "sum_views": 8, "avg_views": 4.0, "min_views": 3, "max_views": 5},
        ("b",): {"count": 2, "sum_views": 8.5, "avg_views": 4.25, "min_views": 1.5, "max_views": 7},
        (None,): {"count": 1, "sum_views": 0, "avg_views": None, "min_views": None, "max_views": None},
    }


@pytest.mark.parametrize("unit, expected", [
    ("year", {("2024",): 4, (None,): 1}),
    ("month", {("2024-01",): 1, ("2024-02",): 3, (None,): 1}),
    ("day", {("2024-01-05",): 1, ("2024-02-05",): 1, ("2024-02-06",): 1, ("2024-02-11",): 1, (None,): 1}),
    ("week", {("2024-01-01",): 1, ("2024-02-05",): 3, (None,): 1}),  # the 11th, a Sunday, is in the 5th's week
])
def test_a_date_text_by_its_unit(io_loop, rows, unit, expected):
    found = grouped(io_loop, rows, [GroupKey("at", unit)])
    assert {key: metrics["count"] for key, metrics in found.items()} == expected


def test_several_keys_are_one_text_decoded_here(io_loop, rows):
    """Each server writes a boolean its own way (true, True, 1): the caller reads it by the field's type."""
    found = grouped(io_loop, rows, [GroupKey("user"), GroupKey("flag"), GroupKey("at", "month")])
    assert {(user, flag.lower() if flag else flag, at): metrics["count"]
            for (user, flag, at), metrics in found.items()} in (
        {("a", "true", "2024-01"): 1, ("a", "false", "2024-02"): 1, ("b", "true", "2024-02"): 1,
         ("b", None, "2024-02"): 1, (None, "true", None): 1},
        {("a", "1", "2024-01"): 1, ("a", "0", "2024-02"): 1, ("b", "1", "2024-02"): 1,
         ("b", None, "2024-02"): 1, (None, "1", None): 1})


def test_the_filter_is_the_match_and_no_key_is_one_group(io_loop, rows):
    where = Filter(conditions=(("views", "gte", 3),))
    assert grouped(io_loop, rows, [], [Metric("count"), Metric("sum", "views")], where) == {
        (): {"count": 3, "sum_views": 15}}
    assert grouped(io_loop, rows, [GroupKey("user")], where=Filter(equals={"user": "zz"})) == {}


def test_more_groups_than_asked_are_read_only_to_tell(io_loop, rows):
    assert len(grouped(io_loop, rows, [GroupKey("at", "day")], most=2)) == 3  # most + 1: "more than 2"
    assert len(grouped(io_loop, rows, [GroupKey("at", "week")], most=1)) == 3  # weeks are read as days, up to 7x


@pytest.mark.skipif(not EMBEDDED_SERVER, reason="facts about the embedded server")
def test_the_embedded_server_evaluates_one_group_expression_only(mongodb_uri, db_name):
    client = pymongo.MongoClient(mongodb_uri)
    try:
        collection = client[db_name]["facts"]
        collection.insert_many([dict(row) for row in ROWS])

        def ids(group_id):
            return sorted(map(repr, (row["_id"] for row in collection.aggregate([{"$group": {"_id": group_id}}]))))
        # an object or an array of keys comes back as itself: one group of everything
        assert ids({"u": "$user", "f": "$flag"}) == [repr({"u": "$user", "f": "$flag"})]
        assert ids(["$user", "$flag"]) == [repr(["$user", "$flag"])]
        assert ids({"$substr": ["$at", 0, 7]}) == sorted(map(repr, ["2024-01", "2024-02", None]))
        with pytest.raises(pymongo.errors.OperationFailure, match=r"\$toDate"):
            ids({"$dateTrunc": {"date": {"$toDate": "$at"}, "unit": "month"}})
    finally:
        client.close()


@pytest.mark.parametrize("values, expected", [
    (["a"], {("a",): {"count": 2}}),
    (["a", "b", None, "a"], {("a",): {"count": 2}, ("b",): {"count": 2}}),
])
def test_a_group_among_values_of_a_key_counts_alike_for_one_value_and_many(io_loop, rows, commands, values,
                                                                           expected):
    # One value is sent as an equality: the embedded server reads it from an index, and tests a bare `$in`
    # on every document (about ten times the time at 5,000 records); several strings carry their bounds,
    # which it reads from the index. MongoDB reads all of them from an index.
    commands.reset()
    assert grouped(io_loop, rows, [GroupKey("user")], where=among("user", values)) == expected
    match = next(c for c in commands.sent if c.get("aggregate") == "rows")["pipeline"][0]["$match"]
    assert match == ({"user": "a"} if len(values) == 1 else {"user": {"$gte": "a", "$lte": "b", "$in": ["a", "b"]}})


@pytest.mark.parametrize("user, expected", [("a", {("a",): {"count": 2}}), ("nobody", {})])
def test_a_count_of_the_one_group_a_filter_fixes_is_a_count(io_loop, rows, commands, user, expected):
    # The embedded server answers a $group by loading every matched record; a count of an equality it
    # reads from an index. Any other metric still needs the group.
    commands.reset()
    assert grouped(io_loop, rows, [GroupKey("user")], where=Filter(equals={"user": user})) == expected
    pipelines = [c["pipeline"] for c in commands.sent if c.get("aggregate") == "rows"]
    assert [[next(iter(stage)) for stage in pipeline] for pipeline in pipelines] == [["$match", "$count"]]
    commands.reset()
    summed = grouped(io_loop, rows, [GroupKey("user")], EVERY, where=Filter(equals={"user": "a"}))
    assert summed[("a",)]["count"] == 2 and summed[("a",)]["sum_views"] == 8
    assert [c["pipeline"][1] for c in commands.sent if c.get("aggregate") == "rows"][0].keys() == {"$group"}
