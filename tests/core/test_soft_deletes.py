"""Soft deletes, declared: the index plan, the `deleted_at` attribute, and the parameters read."""
from datetime import timedelta

import pytest

from service.core.declarations import Context
from service.core.declarations.indexes import index_plan
from service.core.kernel import BadRequest
from service.core.operations.trash import older_than
from service.core.reading import forced, trashed_asked
from tests.soft_deletes import soft_posts  # noqa: F401  (a fixture)


def test_the_index_plan_covers_deleted_at(soft_posts, registry):
    planned = {(p.collection, p.keys): p.reasons for p in index_plan(registry).indexes}
    assert planned[("posts", (("deleted_at", 1),))] == ["soft deletes"]
    assert planned[("comments", (("deleted_at", 1),))] == ["soft deletes"]  # the demo's comments have them
    assert not any(keys == (("deleted_at", 1),) for collection, keys in planned if collection not in ("posts", "comments"))


def test_deleted_at_is_a_read_only_attribute(soft_posts, registry):
    fields = {f.name: f for f in registry.get("posts").fields(Context(door="rest", action="show"))}
    assert fields["deleted_at"].is_readonly and fields["deleted_at"].kind == "date"
    assert "deleted_at" not in {f.name for f in registry.get("tags").fields(Context())}


@pytest.mark.parametrize("params, expected", [({}, "without"), ({"trashed": ""}, "without"),
                                              ({"trashed": "with"}, "with"), ({"trashed": "only"}, "only")])
def test_trashed_is_read(params, expected):
    assert trashed_asked(params) == expected


@pytest.mark.parametrize("params", [{"trashed": "WITH"}, {"trashed": "without"}, {"trashed": "1"}])
def test_other_trashed_values_are_a_bad_request(params):
    with pytest.raises(BadRequest, match="The trashed parameter must be with or only."):
        trashed_asked(params)


def test_force_is_a_boolean():
    assert forced({}) is False and forced({"force": "true"}) is True and forced({"force": "0"}) is False
    with pytest.raises(BadRequest, match="The force parameter must be true or false."):
        forced({"force": "yes"})


def test_ages_for_a_purge():
    assert older_than("30d") == timedelta(days=30) and older_than("90s") == timedelta(seconds=90)
    for text in ("30", "d", "-3d", "3w", "1.5h"):
        with pytest.raises(ValueError):
            older_than(text)
