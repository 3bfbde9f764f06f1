"""One description of a field: the validator, the JSON Schemas of OpenAPI and MCP, the
GraphQL scalar, query coercion and the filter operators all read `describe(field)`.

Each declaration below is one on which the doors used to disagree; the table pins what the
description decides, on every door."""
import pytest
import voluptuous as vol
from graphql import get_named_type

from service import Model, Policy, Repository, field, model
from service.config import Settings
from service.console.application import make_app
from service.core.declarations import models as model_registry
from service.core.declarations.description import describe
from service.core.declarations.registry import build_registry, load_app
from service.core.kernel.errors import BadRequest
from service.core.reading.query import parse_index
from service.core.writing.validation import compiled_rules
from service.graphql.config import GraphQLConfig
from service.graphql.generator import build_schema_objects
from service.graphql.service import GraphQLService
from service.mcp import schemas as mcp_schemas
from service.openapi import build_document
from tests.conftest import ROOT

PREFIX = "/api/restify"


def gadget_fields() -> list:
    return [
        field("n").rules("integer").matchable(),              # text kind, integer rule: was a String in GraphQL
        field("ratio").rules("numeric").matchable(),          # text kind, numeric rule: was a String in GraphQL
        field("flag").rules("boolean").matchable(),           # text kind, boolean rule: was a String in GraphQL
        field("switch").numeric().rules("boolean").matchable(),  # was a Float in GraphQL, a number as a filter
        field("amount").numeric().rules("integer").matchable(),   # was a number as a filter
        field("stamp").numeric().storing_rules("integer"),    # was a number on update and a Float in GraphQL
        field("pin").numeric().rules("confirmed"),            # its confirmation was a String in GraphQL
        field("size").rules("integer").nullable(),            # "" was kept as text and refused as no integer
    ]


class Gadget(Model):
    collection = "gadgets"


class Open(Policy):
    def allow_restify(self, user):
        return True

    def show(self, user, record):
        return True

    def store(self, user):
        return True


@model(Gadget)
class GadgetRepository(Repository):
    def fields(self, request):
        return gadget_fields()


# name -> (type, JSON type of a write, JSON type of a filter value, GraphQL scalar, a query value, its coercion)
DECIDED = {
    "n": ("integer", "integer", "integer", "Long", "5", 5),
    "ratio": ("number", "number", "number", "Float", "2.5", 2.5),
    "flag": ("boolean", "boolean", "boolean", "Boolean", "true", True),
    "switch": ("boolean", "boolean", "boolean", "Boolean", "1", True),
    "amount": ("integer", "integer", "integer", "Long", "7", 7),
}


@pytest.fixture
def registry(monkeypatch):
    """The demo app plus the gadgets (so `ann` can log in and write them)."""
    monkeypatch.setattr(model_registry, "_MODELS", dict(model_registry._MODELS))
    base = load_app(ROOT)
    from repositories.policies import POLICIES  # the copy load_app has just imported
    repositories = [type(resource.repository) for resource in base.resources.values()]
    return build_registry(repositories + [GadgetRepository], {**POLICIES, Gadget: Open})


@pytest.fixture
def app(restify, tmp_path):
    """The factory's app, with GraphQL built from the registry in memory (no generated schema file)."""
    return make_app(restify, graphql=GraphQLService(restify, GraphQLConfig(app_dir=tmp_path)))


def by_name(fields: list) -> dict:
    return {f.name: f for f in fields}


# -- the description itself ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DECIDED))
def test_the_description_gives_one_type(name):
    assert describe(by_name(gadget_fields())[name]).type == DECIDED[name][0]


def test_a_type_rule_of_one_action_types_the_field_for_every_action():
    stamp = by_name(gadget_fields())["stamp"]
    assert describe(stamp).type == "integer"
    with pytest.raises(vol.Invalid, match="The stamp must be an integer."):
        compiled_rules(stamp, "update").validate(2.5)  # the update rules alone once made it a number


def test_integers_within_32_bits_are_graphql_ints_on_both_actions():
    assert describe(field("a").numeric().rules("integer", "between:0,100")).graphql_kind == "integer"
    assert describe(field("b").numeric().rules("integer", "min:0")).graphql_kind == "long"
    assert describe(field("c").rules("integer").storing_rules("max:10").updating_rules("max:10", "min:-5")) \
        .graphql_kind == "long"  # no lower bound on store


def test_each_type_allows_its_filter_operators():
    assert describe(field("a").boolean()).operators == ("eq", "ne", "null")
    assert describe(field("a")).operators == ("eq", "ne", "in", "nin", "null")
    for declared in (field("a").numeric(), field("a").rules("integer"), field("a").date()):
        assert describe(declared).operators == describe(field("b").numeric()).operators
        assert {"gt", "between"} <= set(describe(declared).operators)


def test_query_values_are_coerced_by_the_type_and_a_bad_one_is_a_400():
    n = describe(field("n").rules("integer"))
    assert n.coerce("5") == 5 and n.coerce("null") is None
    with pytest.raises(BadRequest) as raised:
        n.coerce("five")
    assert raised.value.body() == {"message": "The n filter must be a number.",
                                   "errors": {"n": ["The n filter must be a number."]}}
    assert describe(field("f").rules("boolean")).coerce("0") is False
    assert describe(field("s")).coerce("5") == "5"


def test_an_empty_form_value_is_no_value_for_a_typed_text_kind_field():
    assert describe(field("n").rules("integer")).is_text is False
    assert describe(field("s").rules("max:3")).is_text is True


# -- every door reads it --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DECIDED))
def test_every_door_reads_the_same_type(registry, name):
    _, write_type, filter_type, scalar, raw, coerced = DECIDED[name]
    settings = Settings(app_dir=ROOT)
    resource = registry.resources["gadgets"]
    fields = resource.fields(None)
    # OpenAPI: the store body and the index filter parameter
    document = build_document(registry, settings)
    assert document["components"]["schemas"]["gadgets.Store"]["properties"][name]["type"] == write_type
    filters = {p["name"]: p for p in document["paths"][f"{PREFIX}/gadgets"]["get"]["parameters"]}
    assert filters[name]["schema"] == {"type": filter_type}
    # MCP: the store tool and the index tool
    assert mcp_schemas.write_schema(fields, "store")["properties"][name]["type"] == write_type
    assert mcp_schemas.index_schema(resource, fields, settings)["properties"][name]["type"] == [filter_type, "null"]
    # GraphQL: the object type and the input type
    schema = build_schema_objects(registry, GraphQLConfig(app_dir=ROOT))
    assert get_named_type(schema.type_map["Gadget"].fields[name].type).name == scalar
    assert get_named_type(schema.type_map["GadgetInput"].fields[name].type).name == scalar
    # query coercion
    assert parse_index(resource, fields, {name: raw}, settings).equals == {name: coerced}


def test_a_confirmation_has_the_type_of_its_field_on_every_door(registry):
    schema = build_schema_objects(registry, GraphQLConfig(app_dir=ROOT))
    assert get_named_type(schema.type_map["GadgetInput"].fields["pin_confirmation"].type).name == "Float"
    document = build_document(registry, Settings(app_dir=ROOT))
    assert document["components"]["schemas"]["gadgets.Store"]["properties"]["pin_confirmation"]["type"] == "number"


def test_the_update_door_schemas_type_a_field_typed_by_its_store_rules(registry):
    fields = registry.resources["gadgets"].fields(None)
    document = build_document(registry, Settings(app_dir=ROOT))
    assert document["components"]["schemas"]["gadgets.Update"]["properties"]["stamp"]["type"] == "integer"
    assert mcp_schemas.write_schema(fields, "update")["properties"]["stamp"]["type"] == "integer"
    schema = build_schema_objects(registry, GraphQLConfig(app_dir=ROOT))
    assert get_named_type(schema.type_map["GadgetInput"].fields["stamp"].type).name == "Long"


async def test_a_filter_on_a_text_kind_integer_field_finds_what_a_write_stored(api, ann):
    """REST stores `"5"` as the integer 5; the filter `n=5` once looked for the text "5" and found nothing."""
    token = ann["token"]
    stored = await api.post(f"{PREFIX}/gadgets", {"n": "5", "flag": "1"}, token=token)
    assert stored.status == 201, stored.json
    assert stored.json["data"]["attributes"]["n"] == 5
    await api.post(f"{PREFIX}/gadgets", {"n": 6}, token=token)
    found = await api.get(f"{PREFIX}/gadgets?n=5", token=token)
    assert [item["attributes"]["n"] for item in found.json["data"]] == [5]
    flagged = await api.get(f"{PREFIX}/gadgets?flag=true", token=token)
    assert [item["attributes"]["n"] for item in flagged.json["data"]] == [5]


async def test_an_empty_value_of_a_typed_text_kind_field_means_no_value(api, ann):
    """An empty form value means "no value" for every typed field, as it did for typed kinds only."""
    response = await api.post(f"{PREFIX}/gadgets", {"size": ""}, token=ann["token"])
    assert response.status == 201, response.json
    assert response.json["data"]["attributes"]["size"] is None


async def test_graphql_takes_and_gives_a_text_kind_integer_as_an_integer(api, ann):
    """GraphQL once typed `n` a String: `n: 5` was refused there while REST stored 5."""
    query = "mutation { createGadget(input: {n: 5, ratio: 2.5, flag: true}) { n ratio flag } }"
    response = await api.post("/graphql", {"query": query}, token=ann["token"])
    assert response.json == {"data": {"createGadget": {"n": "5", "ratio": 2.5, "flag": True}}}  # n is a Long


def test_dates_are_written_in_utc_with_milliseconds_and_z():
    from datetime import datetime, timedelta, timezone

    from bson.tz_util import utc as stored_utc

    from service.core.declarations import iso

    moment = datetime(2026, 11, 28, 12, 30, 45, 123999)
    assert iso(moment) == "2026-11-28T12:30:45.123Z"  # naive: UTC, as the driver keeps it without tz_aware
    assert iso(moment.replace(tzinfo=timezone.utc)) == "2026-11-28T12:30:45.123Z"
    assert iso(moment.replace(tzinfo=stored_utc)) == "2026-11-28T12:30:45.123Z"  # what the driver reads
    assert iso(moment.replace(tzinfo=timezone(timedelta(hours=2)))) == "2026-11-28T10:30:45.123Z"
    assert iso(moment.replace(tzinfo=timezone(timedelta(hours=-3, minutes=-30)))) == "2026-11-28T16:00:45.123Z"
    assert iso(datetime(2026, 1, 1, tzinfo=timezone(timedelta(seconds=30)))) == "2025-12-31T23:59:30.000Z"
    assert iso("2026-11-28") == "2026-11-28" and iso(None) is None


def test_a_date_written_once_is_written_alike_for_every_spelling_of_its_instant():
    """Dates are kept once written (a bounded memo): equal instants in other zones, a naive date beside
    an aware one, and the two readings of an hour a clock repeats are each written as themselves."""
    from datetime import datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    from service.core.declarations import iso

    utc = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)
    for _ in range(2):  # the second round reads what the first kept
        assert iso(utc) == "2026-03-01T10:00:00.000Z"
        assert iso(utc.astimezone(timezone(timedelta(hours=2)))) == "2026-03-01T10:00:00.000Z"
        assert iso(datetime(2026, 3, 1, 10, 0)) == "2026-03-01T10:00:00.000Z"
        assert iso(datetime(2026, 3, 1, 12, 0)) == "2026-03-01T12:00:00.000Z"
        york = ZoneInfo("America/New_York")  # 01:30 on 1 November 2026 happens twice there
        assert iso(datetime(2026, 11, 1, 1, 30, tzinfo=york)) == "2026-11-01T05:30:00.000Z"
        assert iso(datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=york)) == "2026-11-01T06:30:00.000Z"
