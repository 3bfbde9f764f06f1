"""The read rule (`allow_restify`, the policy's `scope` inside the query, then `show`) composed once
(`service.core.reading.visibility`): its reads agree with each other and with the in-process test the live
feeds use, and no other module composes it."""
import re
from pathlib import Path

import pytest

from service.core.declarations.models import Model
from service.core.declarations.policies import Policy, PolicyMap, any_of
from service.core.declarations.registry import Registry
from service.core.reading import visibility
from storage import Filter
from tests.http.test_index_queries import seed_post

ROOT = Path(__file__).resolve().parents[2]


class _PublishedOrMine(Policy):
    """Published posts, and the user's own; `show` refuses one title the scope lets through."""

    def allow_restify(self, user):
        return True

    def scope(self, user):
        return any_of({"published": True}, {"user_id": user.id}) if user is not None else {"published": True}

    def show(self, user, record):
        return record.title != "withheld"


class _Closed(_PublishedOrMine):
    def allow_restify(self, user):
        return False


def _user(id: str) -> Model:
    return Model({"id": id})


@pytest.fixture
def posts(restify, registry):
    return registry.get("posts")


def _seen(restify, posts, policy, user):
    restify.registry = Registry(restify.registry.resources, PolicyMap({posts.model: policy}))
    return visibility.visibility_of(restify, posts, user)


async def _seed(db) -> dict[str, str]:
    return {
        "public": await seed_post(db, "public", published=True),
        "withheld": await seed_post(db, "withheld", published=True),
        "draft": await seed_post(db, "draft"),
        "mine": await seed_post(db, "mine", user_id="u1"),
    }


@pytest.mark.parametrize("user, expected", [(None, {"public"}), (_user("u1"), {"public", "mine"}),
                                            (_user("u2"), {"public"})], ids=["guest", "owner", "other"])
async def test_every_read_sees_the_same_records(restify, posts, db, user, expected):
    ids = await _seed(db)
    seen = _seen(restify, posts, _PublishedOrMine, user)
    by_title = {title: await seen.find(id) for title, id in ids.items()}
    assert {title for title, found in by_title.items() if found is not None} == expected
    assert set(await seen.find_many([*ids.values(), "missing", 7])) == {ids[t] for t in expected}
    in_scope = await db.collection("posts").find(seen.within(Filter()))
    assert {d["title"] for d in seen.shown(in_scope)} == expected
    assert {d["title"] for d in in_scope} == expected | {"withheld"}  # show is asked after the query
    everything = await db.collection("posts").find(Filter())
    assert {d["title"] for d in everything if seen.admits(d)} == expected


async def test_a_policy_that_lets_nobody_in_shows_nothing(restify, posts, db):
    ids = await _seed(db)
    seen = _seen(restify, posts, _Closed, _user("u1"))
    assert not seen.entered
    assert await seen.find(ids["public"]) is None and await seen.find_many(ids.values()) == {}
    assert not any(seen.admits(d) for d in await db.collection("posts").find(Filter()))


async def test_within_keeps_the_query_and_adds_the_scope(restify, posts, db):
    await _seed(db)
    seen = _seen(restify, posts, _PublishedOrMine, _user("u1"))
    where = seen.within(Filter(equals={"published": False}))
    assert [d["title"] for d in await db.collection("posts").find(where)] == ["mine"]


def test_no_other_module_composes_the_read_rule():
    """`show` on a read record and the compiled scope are asked in `visibility` only."""
    composing = re.compile(r"\.shows\(|policies\.scope\(|policies\.restrict\(|\.gate\([^)]*\)\.shows")
    found = {str(path.relative_to(ROOT)) for path in (ROOT / "service").rglob("*.py")
             if composing.search(path.read_text())}
    assert found == {"service/core/reading/visibility.py"}
