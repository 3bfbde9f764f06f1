"""Which relations can write records in several places (service/core/reading/planning.py): those requests
read their page's keys first and are refused, when over the rows cap, before the page is read whole."""
import pytest

from service.core.declarations.registry import load_app
from service.core.reading.planning import amplifies, key_fields
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def resources():
    registry = load_app(ROOT)
    return {name: registry.get(name) for name in ("posts", "comments", "users", "tags")}


@pytest.mark.parametrize("name, tree, expected", [
    ("posts", {"user": {"posts": {}}}, True),          # the user under each post, all its posts under it
    ("comments", {"post": {"comments": {}}}, True),
    ("comments", {"post": {"tags": {}}}, True),         # a belongs-to-many beneath the shared post
    ("comments", {"post": {"user": {"posts": {}}}}, True),  # deeper: shared from the post down
    ("posts", {"user": {}}, False),                     # a shared record, but nothing to-many beneath it
    ("posts", {"comments": {"user": {}}}, False),       # each comment under one post only
    ("posts", {"comments": {}, "tags": {}}, False),
    ("users", {"posts": {"comments": {}}}, False),      # to-many below to-many: each record in one place
])
def test_a_to_many_level_beneath_shared_records_amplifies(resources, name, tree, expected):
    assert amplifies(resources[name], tree) is expected


def test_the_keys_read_first_are_the_id_and_the_first_relations_keys(resources):
    assert key_fields(resources["posts"], {"user": {"posts": {}}, "tags": {}, "comments": {}}) == \
        ("id", "tag_ids", "user_id")
