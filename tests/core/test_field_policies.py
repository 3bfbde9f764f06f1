"""Fields by policy, declared: what each door describes, one request's view, and the declarations
refused at start."""
import pytest

from service import BelongsTo, DeclarationError, Model, Policy, Repository, belongs_to, field
from service.config import Settings
from service.core.declarations import Context, models as model_registry
from service.core.declarations.registry import build_registry, load_app
from service.graphql.config import GraphQLConfig
from service.graphql.generator import render
from service.openapi import build_document
from tests.conftest import ROOT
from tests.field_policies import with_field_policies

BY_POLICY = "Absent (GraphQL: null) where the caller may not see it."


@pytest.fixture
def posts():
    return with_field_policies(load_app(ROOT))


def test_openapi_marks_fields_by_policy_and_leaves_out_none_it_shows(posts):
    document = build_document(posts, Settings(app_dir=ROOT))
    attributes = document["components"]["schemas"]["posts.Attributes"]["properties"]
    assert attributes["views"]["description"] == BY_POLICY and attributes["body"]["description"] == BY_POLICY
    assert "description" not in attributes["title"] and "cover" in attributes  # hidden from MCP and GraphQL only
    index = {p["name"] for p in document["paths"]["/api/restify/posts"]["get"]["parameters"]}
    assert "views" in index  # described: a user who may see it filters on it


def test_graphql_types_fields_by_policy_as_nullable_and_leaves_out_those_hidden_from_it(posts):
    sdl = render(posts, GraphQLConfig({}, app_dir=ROOT))
    post = sdl.split("type Post {", 1)[1].split("\n}", 1)[0]
    assert f'"""{BY_POLICY}"""\n  views: Long' in post and "cover" not in post


def test_the_view_of_a_request(posts):
    resource = posts.get("posts")
    guest = {f.name: f for f in resource.fields(Context(door="rest", action="index"))}
    assert guest["views"].is_private and not guest["views"].is_matchable and not guest["views"].is_sortable
    assert guest["body"].is_hidden and not guest["cover"].is_hidden and not guest["title"].is_private
    shown = {f.name: f for f in resource.fields(Context(door="mcp", action="show"))}
    assert shown["cover"].is_hidden and not shown["body"].is_hidden
    declared = resource.repository.fields(None)
    assert not any(f.is_private or f.is_hidden for f in declared)  # the declarations are not changed


def test_a_context_asks_the_repository_once_for_each_view(posts):
    # An operation asks for the fields several times, a live subscription on every change: they are
    # worked out once per context and what they depend on.
    resource = posts.get("posts")
    asked, declared = [], resource.repository.fields
    resource.repository.fields = lambda request: asked.append((request.action, dict(request.params))) or \
        declared(request)
    context = Context(door="rest", action="index")
    listed = [{f.name: f for f in resource.fields(context)} for _ in range(3)]
    assert asked == [("index", {})] and all(fields["body"].is_hidden for fields in listed)
    context.action = "show"
    assert not {f.name: f for f in resource.fields(context)}["body"].is_hidden
    context.params = {"related": "user"}
    resource.fields(context), resource.fields(context)
    assert asked == [("index", {}), ("show", {}), ("show", {"related": "user"})]
    uncached = Context(door="rest", action="index", seen_fields=None)  # None: worked out on every call
    resource.fields(uncached), resource.fields(uncached)
    assert asked[3:] == [("index", {}), ("index", {})]


def test_hide_from_names_a_door():
    with pytest.raises(DeclarationError, match="hide_from\\('web'\\) names no door"):
        field("x").hide_from("web")


def test_a_relation_cannot_search_through_a_field_by_policy(monkeypatch):
    monkeypatch.setattr(model_registry, "_MODELS", dict(model_registry._MODELS))

    class PolicyOwner(Model):
        collection = "owners"

    class PolicyItem(Model):
        collection = "items"
        owner = belongs_to("PolicyOwner")

    class OwnerRepository(Repository):
        model = PolicyOwner

        def fields(self, request):
            return [field("name").can_see(lambda user, record: user is not None)]

    class ItemRepository(Repository):
        model = PolicyItem

        @classmethod
        def related(cls):
            return {"owner": BelongsTo("owner", OwnerRepository).searchable("name")}

        def fields(self, request):
            return [field("owner_id")]

    with pytest.raises(DeclarationError, match="OwnerRepository has no visible field 'name'"):
        build_registry([OwnerRepository, ItemRepository], {PolicyOwner: Policy, PolicyItem: Policy})


@pytest.mark.parametrize("exposed", ["matchable", "sortable", "searchable"])
def test_a_computed_field_cannot_be_filtered_sorted_or_searched(exposed):
    with pytest.raises(DeclarationError, match=f"field 'n' is computed, so it cannot be {exposed}"):
        getattr(field("n").integer().computed(lambda record, context: 1), exposed)()
    with pytest.raises(DeclarationError, match="is computed"):
        getattr(field("n"), exposed)().computed_many(lambda records, context: [])


def test_openapi_describes_computed_fields_as_read_only(posts):
    from tests.computed_fields import computed_fields
    repository = posts.get("posts").repository
    declared = repository.fields
    repository.fields = lambda request: [*declared(request), *computed_fields()]
    document = build_document(posts, Settings(app_dir=ROOT))
    attributes = document["components"]["schemas"]["posts.Attributes"]["properties"]
    assert attributes["comment_count"] == {"type": ["integer", "null"], "readOnly": True}
    assert "comment_count" not in document["components"]["schemas"]["posts.Store"]["properties"]
