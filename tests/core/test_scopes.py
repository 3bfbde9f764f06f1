"""Scope expressions tested in the process (`scopes.admits`, used by the live feeds) agree with
the same rule run as a query on the database."""
import pytest

from service.core.declarations.scopes import admits, compile_alternatives
from storage import Filter
from tests.storage.test_conformance import PEOPLE, seed

RULES = [
    ({"age": {"gte": 35}}, {"name": "Ann"}),
    ({"age": {"gt": 29, "lt": 41}},),
    ({"group": "a", "score": {"gte": 2}}, {"active": {"ne": True}}),
    ({"name": {"in": ["Bob", "Cid"]}, "age": {"lte": 30}},),
    ({"name": {"nin": ["Bob"]}},),
    ({"note": {"null": True}}, {"age": {"between": [40, 41]}}),
    ({"note": {"null": False}},),
    ({"note": None, "active": True},),
    ({"note": {"ne": None}},),
]


@pytest.mark.parametrize("rule", RULES, ids=[str(i) for i in range(len(RULES))])
async def test_admits_agrees_with_the_query(db, rule):
    people = db.collection("people")
    stored = await seed(people)
    alternatives = compile_alternatives("Test", rule)
    found = {d["id"] for d in await people.find(Filter(any_of=alternatives))}
    assert {d["id"] for d in stored if admits(alternatives, d)} == found
    assert len(stored) == len(PEOPLE)


def test_admits_reads_everything_without_a_rule_and_nothing_with_no_alternative():
    assert admits(None, {"a": 1}) is True
    assert admits((), {"a": 1}) is False
