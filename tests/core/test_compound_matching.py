"""any, all and not judged twice: by the database (storage compiles them to `$or` / `$nor`) and by the
in-process matcher live feeds use; both must select exactly the same records, missing and null values,
dates, booleans and texts included."""
from datetime import datetime, timezone

import pytest

from service.core.kernel.matching import satisfies
from storage import Filter
from tests.core.test_filter_objects import typed

DAY = datetime(2024, 1, 2, 12, 0, tzinfo=timezone.utc)
DOCUMENTS = (
    {"title": "a", "views": 0, "ratio": 0.5, "published": True, "due": DAY},
    {"title": "b", "views": 5, "published": False, "due": None},
    {"title": "c", "views": 7, "ratio": 2.5},
    {"title": "d", "published": True, "due": datetime(2024, 1, 5, tzinfo=timezone.utc)},
    {"title": "e", "views": None, "ratio": None, "published": None},
    {"title": "f", "views": 9, "ratio": 9.0, "published": False, "due": datetime(2023, 12, 31, tzinfo=timezone.utc)},
)
FILTERS = [
    {"any": [{"views": {"eq": 0}}, {"views": {"gte": 7}}]},
    {"not": {"views": {"gt": 5}}},
    {"not": {"due": {"lt": "2024-01-03"}}},
    {"not": {"due": {"gte": "2024-01-01"}}},
    {"not": {"published": {"eq": True}}},
    {"not": {"published": {"ne": True}}},
    {"not": {"ratio": {"isNull": True}}},
    {"not": {"views": {"in": [0, 5]}}},
    {"not": {"views": {"nin": [0, 5]}}},
    {"not": {"title": {"eq": None}}},
    {"not": {"views": {"eq": None}}},
    {"not": {"views": {"between": [1, 8]}, "published": {"eq": False}}},
    {"any": [{"ratio": {"lt": 1}}, {"due": {"isNull": True}}]},
    {"all": [{"any": [{"views": {"gte": 5}}, {"ratio": {"gte": 2}}]}, {"not": {"title": {"in": ["c"]}}}]},
    {"not": {"any": [{"views": {"gte": 5}}, {"due": {"gt": "2024-01-04"}}]}},
    {"any": [{"not": {"ratio": {"gte": 1}}}, {"not": {"due": {"isNull": False}}}]},
    {"not": {"not": {"due": {"lte": "2024-01-02"}}}},
    {"any": [{"title": {"ne": "a"}, "views": {"lt": 1}}, {"title": {"in": ["e", "f"]}}]},
]


@pytest.mark.parametrize("given", FILTERS)
async def test_the_matcher_selects_what_the_database_selects(db, given):
    posts = db.collection("posts")
    for document in DOCUMENTS:
        await posts.insert(document)
    query = typed(given)
    assert not query.equals  # every condition of these objects is one the matcher judges
    found = sorted(d["title"] for d in await posts.find(Filter(conditions=tuple(query.conditions))))
    judged = sorted(d["title"] for d in DOCUMENTS if satisfies(query.conditions, d))
    assert found == judged
