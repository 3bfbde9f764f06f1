"""The OpenAPI document describes the user's tokens and the 403 of a missing ability; answers match it."""
import json

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from service.config import Settings
from service.core.declarations.registry import load_app
from service.openapi import build_document
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def document():
    return build_document(load_app(ROOT), Settings(app_dir=ROOT))


def checker(document, name: str) -> Draft202012Validator:
    """A validator of components schema `name`, its references resolved within the document's schemas."""
    schemas = json.loads(json.dumps(document["components"]["schemas"]).replace("#/components/schemas/", "#/$defs/"))
    return Draft202012Validator({**schemas[name], "$defs": schemas})


def test_the_token_routes_are_documented(document):
    validate(document, cls=OpenAPIV31SpecValidator)
    tokens, one = document["paths"]["/api/tokens"], document["paths"]["/api/tokens/{id}"]
    assert (tokens["get"]["operationId"], tokens["post"]["operationId"], one["delete"]["operationId"]) == (
        "tokens.index", "tokens.store", "tokens.delete")
    assert list(tokens["post"]["responses"]) == ["201", "400", "401", "403", "413", "414", "422", "503"]
    assert list(one["delete"]["responses"]) == ["204", "401", "404", "414", "503"]
    assert all(operation["security"] == [{"bearerAuth": []}] for operation in (tokens["get"], tokens["post"],
                                                                                one["delete"]))
    logout = document["paths"]["/api/logout"]["post"]
    assert logout["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Logout"}


def test_the_403_response_names_missing_abilities(document):
    forbidden = document["components"]["responses"]["Forbidden"]
    assert "MISSING_ABILITY" in forbidden["description"]
    assert forbidden["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ForbiddenError"}
    missing = {"message": 'This token lacks the ability "posts:write".', "code": "MISSING_ABILITY",
               "ability": "posts:write"}
    assert checker(document, "ForbiddenError").is_valid(missing)
    assert checker(document, "ForbiddenError").is_valid({"message": "This action is unauthorized."})


async def test_the_answers_match_their_schemas(api, ann, document):
    made = await api.post("/api/tokens", {"name": "ci", "abilities": ["posts:read"]}, token=ann["token"])
    checker(document, "NewAccessToken").validate(made.json)
    checker(document, "AccessTokenList").validate((await api.get("/api/tokens", token=ann["token"])).json)
    refused = await api.post("/api/restify/posts", {"title": "x"}, token=made.json["meta"]["token"])
    checker(document, "ForbiddenError").validate(refused.json)
