"""A broken declaration fails at start-up with a DeclarationError that says what and where."""
import logging
import sys
from textwrap import dedent

import pytest

from service import BelongsTo, DeclarationError, HasMany, Model, Policy, Repository, belongs_to, field, has_many, model
from service.core.declarations import models as model_registry
from service.core.declarations.registry import build_registry, load_app

WAYS = ("the @model(...) decorator; a `model = ...` class property (class or dotted path); "
        "naming it after the model (PostRepository -> Post in the models module)")

MODELS = """
    from service import Model, belongs_to, has_many

    class Post(Model):
        comments = has_many("Comment")

    class Comment(Model):
        post = belongs_to("Post")

    class BlogPost(Model):
        pass
"""

POLICIES = """
    from service import Policy
    from repositories.models import BlogPost, Comment, Post

    class Open(Policy):
        def allow_restify(self, user):
            return True

    POLICIES = {Post: Open, Comment: Open, BlogPost: Open}
"""

IMPORTS = """
    from service import Repository, model
    from repositories.models import Post
"""


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch):
    """Apps written here never leak into sys.path, sys.modules or the model registry."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(model_registry, "_MODELS", dict(model_registry._MODELS))
    ours = lambda name: name == "repositories" or name.startswith("repositories.")  # noqa: E731
    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    yield
    for name in [name for name in sys.modules if ours(name)]:
        del sys.modules[name]
    sys.modules.update(saved)


def write_app(app_dir, **modules):
    """`<app_dir>/repositories/` with the models, the policies and the given repository modules."""
    package = app_dir / "repositories"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, source in {"models": MODELS, "policies": POLICIES, **modules}.items():
        (package / f"{name}.py").write_text(dedent(source))
    return app_dir


def declaration_error(build) -> str:
    with pytest.raises(DeclarationError) as caught:
        build()
    return str(caught.value)


def blog():
    """Fresh Post/Comment models and a repository for comments."""
    class Post(Model):
        comments = has_many("Comment")

    class Comment(Model):
        post = belongs_to("Post")

    @model(Comment)
    class CommentRepository(Repository):
        pass

    return Post, Comment, CommentRepository


def post_repository(post_model, related=None, fields=list):
    @model(post_model)
    class PostRepository(Repository):
        @classmethod
        def related(cls):
            return related or {}

        def fields(self, request):
            return fields()

    return PostRepository


# -- binding a repository to its model ------------------------------------------------

@pytest.mark.parametrize("source, uri_key, model_name", [
    (IMPORTS + "\n    @model(Post)\n    class Writing(Repository):\n        pass\n", "posts", "Post"),
    (IMPORTS + "\n    class Writing(Repository):\n        model = Post\n", "posts", "Post"),
    (IMPORTS + "\n    class Writing(Repository):\n        model = 'repositories.models.Post'\n", "posts", "Post"),
    (IMPORTS + "\n    class PostRepository(Repository):\n        pass\n", "posts", "Post"),
    (IMPORTS + "\n    class BlogPostRepository(Repository):\n        pass\n", "blog_posts", "BlogPost"),
    (IMPORTS + "\n    class Writing(Repository):\n        model = Post\n        uri_key = 'articles'\n", "articles", "Post"),
], ids=["decorator", "class-property", "dotted-path", "guessed", "guessed-two-words", "uri-key"])
def test_repository_is_bound_to_its_model_and_served_under_its_key(tmp_path, source, uri_key, model_name):
    registry = load_app(write_app(tmp_path, writing=source))
    assert list(registry.resources) == [uri_key]
    assert registry.get(uri_key).model is getattr(sys.modules["repositories.models"], model_name)


def test_binding_the_model_twice_is_an_error(tmp_path):
    source = IMPORTS + "\n    @model(Post)\n    class Writing(Repository):\n        model = Post\n"
    app_dir = write_app(tmp_path, writing=source)
    assert declaration_error(lambda: load_app(app_dir)) == f"Writing binds its model twice; use exactly one of: {WAYS}"


@pytest.mark.parametrize("source, message", [
    ("class GhostRepository(Repository):\n        pass",
     f"GhostRepository: cannot resolve its model. Bind it in one of three ways: {WAYS}"),
    ("class Writing(Repository):\n        pass",
     f"Writing: cannot resolve its model. Bind it in one of three ways: {WAYS}"),
    ("class Writing(Repository):\n        model = 'repositories.models.Ghost'",
     "Writing.model = 'repositories.models.Ghost' is not a Model class or a dotted path to one"),
])
def test_unresolvable_model_names_the_class_and_the_ways(tmp_path, source, message):
    app_dir = write_app(tmp_path, writing=IMPORTS + "\n    " + source + "\n")
    assert declaration_error(lambda: load_app(app_dir)) == message


def test_two_repositories_serving_one_key_is_an_error():
    Post, Comment, CommentRepository = blog()
    first, second = post_repository(Post), post_repository(Post)
    second.__name__ = "OtherPostRepository"
    assert declaration_error(lambda: build_registry([first, second], {})) == (
        "OtherPostRepository and PostRepository both serve 'posts'"
    )


# -- fields ---------------------------------------------------------------------------

@pytest.mark.parametrize("rule, problem", [
    ("maxx:3", "unknown rule 'maxx:3'"),
    ("max:many", "rule 'max:many' needs a number"),
    ("between:1", "rule 'between:1' needs two numbers"),
    ("in", "rule 'in' needs parameters"),
])
def test_unreadable_rule_names_the_repository_and_the_field(rule, problem):
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, fields=lambda: [field("title").rules(rule)])
    assert declaration_error(lambda: build_registry([repository], {})) == f"PostRepository: field 'title': {problem}"


@pytest.mark.parametrize("name", ["id", "_id", "$where", "a.b"])
def test_reserved_field_names_are_refused(name):
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, fields=lambda: [field(name)])
    assert declaration_error(lambda: build_registry([repository], {})) == (
        f"PostRepository: field name {name!r} is repeated or reserved"
    )


HIDDEN = "field 'secret' is hidden, so it cannot be {}: filters, sort orders and search would reveal its values"


@pytest.mark.parametrize("declare, exposed", [
    (lambda: field("secret").hidden().matchable(), "matchable"),
    (lambda: field("secret").matchable().hidden(), "matchable"),
    (lambda: field("secret").hidden().sortable(), "sortable"),
    (lambda: field("secret").sortable().hidden(), "sortable"),
    (lambda: field("secret").searchable().hidden(), "searchable"),
    (lambda: field("secret").hidden().searchable(), "searchable"),
    (lambda: field("secret").password().sortable(), "sortable"),
    (lambda: field("secret").matchable().sortable().password(), "matchable or sortable"),
], ids=["hidden-matchable", "matchable-hidden", "hidden-sortable", "sortable-hidden", "searchable-hidden",
        "hidden-searchable", "password-sortable", "matchable-sortable-password"])
def test_a_hidden_field_cannot_be_matched_sorted_or_searched_whatever_the_order(declare, exposed):
    """Its values would leak: `?secret=pin-0074` answers who has it, a sort orders by it and puts it in cursors."""
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, fields=lambda: [field("title"), declare()])
    with pytest.raises(DeclarationError) as caught:
        build_registry([repository], {})
    assert str(caught.value) == f"PostRepository: {HIDDEN.format(exposed)}"
    assert caught.value.location == (__file__, caught.value.location[1])  # the line of the field(...)


def test_a_hidden_field_set_by_hand_is_refused_at_load_too():
    Post, Comment, CommentRepository = blog()
    secret = field("secret").sortable()
    secret.is_hidden = True
    repository = post_repository(Post, fields=lambda: [secret])
    assert declaration_error(lambda: build_registry([repository], {})) == f"PostRepository: {HIDDEN.format('sortable')}"


def test_a_hidden_field_alone_or_a_visible_one_exposed_is_fine():
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, fields=lambda: [field("secret").hidden().readonly(),
                                                       field("pin").password(),
                                                       field("title").matchable().sortable().searchable()])
    assert list(build_registry([repository], {}).resources) == ["posts"]


# -- relations --------------------------------------------------------------------------

def test_relation_to_a_repository_that_is_not_loaded_is_an_error():
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, related={"comments": HasMany("comments", CommentRepository)})
    assert declaration_error(lambda: build_registry([repository], {})) == (
        "PostRepository.related()['comments'] refers to repository 'CommentRepository', which is not loaded"
    )


@pytest.mark.parametrize("related, message", [
    ({"replies": HasMany("replies", "CommentRepository")},
     "PostRepository.related()['replies']: model Post has no relation 'replies'"),
    ({"comments": BelongsTo("comments", "CommentRepository")},
     "PostRepository.related()['comments'] is a belongs_to but Post.comments is a has_many"),
])
def test_relation_must_match_a_relation_of_the_model(related, message):
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, related=related)
    assert declaration_error(lambda: build_registry([repository, CommentRepository], {})) == message


def test_relation_resolves_to_the_target_resource():
    Post, Comment, CommentRepository = blog()
    repository = post_repository(Post, related={"comments": HasMany("comments", CommentRepository)})
    relation = build_registry([repository, CommentRepository], {}).get("posts").relations["comments"]
    assert (relation.kind, relation.target.name, relation.local_key, relation.foreign_key) == (
        "has_many", "comments", "id", "post_id",
    )


# -- policies -----------------------------------------------------------------------------

@pytest.mark.parametrize("policies, message", [
    (lambda post: {post: object}, "POLICIES[Post] = <class 'object'> is not a Policy"),
    (lambda post: {post: "PostPolicy"}, "POLICIES[Post] = 'PostPolicy' is not a Policy"),
    (lambda post: {"Post": Policy}, "POLICIES key 'Post' is not a Model class"),
])
def test_policy_map_entry_that_is_not_a_policy_is_an_error(policies, message):
    Post, Comment, CommentRepository = blog()
    assert declaration_error(lambda: build_registry([post_repository(Post)], policies(Post))) == message


def test_model_without_a_policy_is_denied_and_named_once_in_the_log_at_start(caplog):
    Post, Comment, CommentRepository = blog()
    with caplog.at_level(logging.WARNING, logger="restify.policies"):
        registry = build_registry([post_repository(Post), CommentRepository], {Comment: Policy})
        assert len(caplog.records) == 1  # said when the registry is built, before any use
        record = Post({"id": "1"})
        assert registry.policies.allows(Post, "show", None, record) is False
        assert registry.policies.flags(Post, None, record) == dict.fromkeys(
            ("authorizedToShow", "authorizedToStore", "authorizedToUpdate", "authorizedToDelete"), False
        )
    assert [r.getMessage() for r in caplog.records if r.name == "restify.policies"] == [
        "no policy registered for model Post: every operation on it is denied; add a policy class for it in "
        "repositories/policies.py and list it in POLICIES ({Post: PostPolicy})"
    ]


# -- loading apps ------------------------------------------------------------------------

def test_loading_one_app_after_another_imports_each_apps_own_package(tmp_path):
    first = write_app(tmp_path / "first", posts=IMPORTS + "\n    class PostRepository(Repository):\n        pass\n")
    second = write_app(tmp_path / "second", blog=IMPORTS + "\n    class BlogPostRepository(Repository):\n        pass\n")
    assert list(load_app(first).resources) == ["posts"]
    assert list(load_app(second).resources) == ["blog_posts"]
    assert list(load_app(first).resources) == ["posts"]


def test_fields_built_one_after_another_share_no_rules_or_messages():
    first = field("title").rules("max:255").storing_rules("required").messages({"max": "Too long."})
    first.rules("min:2|string").updating_rules(["min:3"]).messages({"min": "Too short."})
    second = field("body")
    assert (first.rule_list, first.storing_rule_list, first.updating_rule_list) == (
        ["max:255", "min:2", "string"], ["required"], ["min:3"])
    assert first.message_map == {"max": "Too long.", "min": "Too short."}
    assert (second.rule_list, second.storing_rule_list, second.updating_rule_list, second.message_map) == (
        [], [], [], {})
    assert field("views").rule_list == [] and field("views").is_sortable is False
