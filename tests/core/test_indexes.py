"""The index plan read from the declarations, and what `ready()` makes of it on the server."""
import os
import sys

import pytest

from service import any_of
from service.core.declarations.indexes import index_plan, scope_fields, states
from service.core.declarations.policies import Policy, PolicyMap
from service.core.declarations.registry import Registry, load_app
from service.core.kernel import DeclarationError
from storage import DuplicateKey
from tests.servers import EMBEDDED_SHAPES

EMBEDDED = not os.environ.get("MONGODB_URI")
ID = ("id", 1)


def test_the_demo_plan_names_every_index_and_why(registry):
    planned = [(p.collection, p.keys, p.unique, p.reasons) for p in index_plan(registry).indexes]
    assert planned == [
        ("comments", (("created_at", 1), ID), False, ["sortable"]),  # newest first, on every repository
        ("comments", (("deleted_at", 1),), False, ["soft deletes"]),
        ("comments", (("post_id", 1), ID), False, ["matchable", "belongs_to post", "has_many comments of posts"]),
        ("comments", (("user_id", 1), ID), False, ["matchable", "belongs_to user"]),
        ("personal_access_tokens", (("token_hash", 1),), True, ["bearer tokens"]),
        ("posts", (("created_at", 1), ID), False, ["sortable"]),
        ("posts", (("published", 1), ID), False, ["matchable", "groupable"]),
        ("posts", (("tag_ids", 1),), False, ["belongs_to_many tags"]),
        ("posts", (("title", 1), ID), False, ["sortable"]),
        ("posts", (("title", "text"),), False, ["text search"]),  # one text index, whatever its fields
        ("posts", (("user_id", 1), ID), False, ["matchable", "groupable", "belongs_to user",
                                                "has_many posts of users"]),
        ("posts", (("views", 1), ID), False, ["matchable", "sortable"]),
        ("tags", (("name", 1),), True, ["unique rule of tags"]),
        ("tags", (("created_at", 1), ID), False, ["sortable"]),
        ("tags", (("name", 1), ID), False, ["sortable"]),
        ("users", (("email", 1),), True, ["unique rule of users"]),
        ("users", (("created_at", 1), ID), False, ["sortable"]),
        ("users", (("name", 1), ID), False, ["sort of posts by user.name", "sortable"]),
    ]


def test_a_relation_sort_plans_the_parents_order_and_a_relation_search_plans_nothing(app_copy):
    comments = app_copy / "repositories" / "comments.py"
    comments.write_text(comments.read_text().replace(
        '"user": BelongsTo("user", UserRepository)',
        '"user": BelongsTo("user", UserRepository).sortable("bio", "id").searchable("bio")'))
    try:
        planned = [(p.collection, p.keys, p.reasons) for p in index_plan(load_app(app_copy)).indexes
                   if p.collection == "users"]
    finally:
        sys.path.remove(str(app_copy.resolve()))
        for name in [m for m in sys.modules if m == "repositories" or m.startswith("repositories.")]:
            del sys.modules[name]
    assert planned == [
        ("users", (("email", 1),), ["unique rule of users"]),
        ("users", (("bio", 1), ID), ["sort of comments by user.bio"]),
        ("users", (("created_at", 1), ID), ["sortable"]),
        ("users", (("name", 1), ID), ["sort of posts by user.name", "sortable"]),
    ]


class _Guests(Policy):
    def scope(self, user):
        return any_of({"published": True}, {"user_id": user.id if user else None})


class _Owners(Policy):
    def scope(self, user):
        return {"user_id": user.id}  # raises for no user


class _Declared(_Owners):
    scope_fields = ("user_id", "team_id")


@pytest.mark.parametrize("policy, fields", [
    (_Guests, ("published", "user_id")),  # read from scope(None)
    (_Owners, ()),                        # needs a user, declares nothing: no index
    (_Declared, ("user_id", "team_id")),  # declared
    (Policy, ()),                         # True: everything, nothing to filter on
])
def test_scope_fields_come_from_the_declaration_or_scope_of_no_user(registry, policy, fields):
    posts = registry.get("posts")
    scoped = Registry(registry.resources, PolicyMap({posts.model: policy}))
    assert scope_fields(scoped, posts) == fields


def test_several_text_fields_share_one_text_index_and_a_plain_searchable_field_beside_them_is_refused(app_copy):
    path = app_copy / "repositories" / "posts.py"
    source = path.read_text()
    path.write_text(source.replace('field("body").textarea().nullable()',
                                   'field("body").textarea().nullable().searchable(text=True)'))
    planned = [(p.keys, p.reasons) for p in index_plan(load_app(app_copy)).indexes if p.text]
    assert planned == [((("body", "text"), ("title", "text")), ["text search"])]
    path.write_text(source.replace('field("body").textarea().nullable()',
                                   'field("body").textarea().nullable().searchable()'))
    with pytest.raises(DeclarationError, match="'body' is searchable without text=True beside text fields "
                                               r"\(title\): a repository's searchable fields are all text=True"):
        load_app(app_copy)


def test_a_scope_field_gets_its_index(registry):
    posts = registry.get("posts")
    scoped = Registry(registry.resources, PolicyMap({posts.model: _Declared}))
    team = [p for p in index_plan(scoped).indexes if p.keys == (("team_id", 1),)]
    assert [(p.collection, p.reasons) for p in team] == [("posts", ["policy scope"])]


async def _keys(db, collection):
    return sorted((index.keys for index in await db.collection(collection).indexes()), key=str)


async def test_ready_creates_the_plan(restify, db):
    await restify.ready()
    expected = [(("created_at", 1), ID), (("id", 1),), (("published", 1), ID), (("tag_ids", 1),), (("title", 1), ID),
                (("user_id", 1), ID), (("views", 1), ID)]
    if EMBEDDED:  # it refuses `_id` in a compound index: the field alone is made instead
        expected = sorted(tuple(key for key in keys if key != ID) or keys for keys in expected)
    if not EMBEDDED_SHAPES:  # the text index is made where `$text` is sent
        expected = sorted([*expected, (("title", "text"),)], key=str)
    assert sorted(await _keys(db, "posts"), key=str) == sorted(expected, key=str)
    found, extra = (await states(db, index_plan(restify.registry)))["posts"]
    text = "not used" if EMBEDDED_SHAPES else "exists"  # the embedded profile searches substrings
    assert [state.status for state in found] == ["exists"] * 4 + [text, "exists", "exists"] and extra == []
    assert [state.unsupported for state in found] == [EMBEDDED, EMBEDDED, False, EMBEDDED, False, EMBEDDED, EMBEDDED]


@pytest.mark.parametrize("config", [{"database": {"auto_indexes": False}}], indirect=False)
async def test_without_auto_indexes_only_unique_indexes_are_made(restify, db):
    await restify.ready()
    assert await _keys(db, "posts") in ([], [(("id", 1),)])
    assert await _keys(db, "users") == [(("email", 1),), (("id", 1),)]


async def test_a_unique_rule_replaces_a_plain_index_on_the_same_field(restify, db, app_copy):
    await db.collection("posts").create_index((("title", 1),))
    path = app_copy / "repositories" / "posts.py"
    path.write_text(path.read_text().replace('field("title").required().rules("max:255")',
                                             'field("title").required().rules("max:255", "unique:posts,title")'))
    restify.registry = load_app(app_copy)
    await restify.ready()
    await db.collection("posts").insert({"title": "Same"})
    with pytest.raises(DuplicateKey):
        await db.collection("posts").insert({"title": "Same"})
    assert [i.unique for i in await db.collection("posts").indexes() if i.keys == (("title", 1),)] == [True]


def test_a_model_without_a_policy_has_no_scope_fields_and_reading_them_logs_nothing(registry, caplog):
    posts = registry.get("posts")
    unguarded = Registry(registry.resources, PolicyMap({}))
    assert scope_fields(unguarded, posts) == ()
    assert "no policy registered" not in caplog.text  # said when the model is first used, not at start
