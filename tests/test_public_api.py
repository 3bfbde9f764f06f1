"""`service.__all__` is the whole public API for repository authors, and every name in it imports."""
import pytest

import service

PUBLIC_API = [
    "Action", "BadRequest", "BelongsTo", "BelongsToMany", "Context", "DeclarationError", "Field", "Forbidden", "Getter", "HasMany",
    "Model", "NotFound", "Policy", "Repository", "RestifyError", "Seeder", "Unauthenticated", "ValidationFailed", "Webhook",
    "any_of", "belongs_to", "belongs_to_many", "current_user_id", "field", "has_many", "model",
]


def test_all_names_exactly_the_public_api():
    assert sorted(service.__all__) == sorted(PUBLIC_API)
    assert len(set(service.__all__)) == len(service.__all__)


@pytest.mark.parametrize("name", PUBLIC_API)
def test_each_public_name_imports_from_service(name):
    namespace: dict = {}
    exec(f"from service import {name}", namespace)
    assert namespace[name] is getattr(service, name)


def test_star_import_brings_exactly_the_public_api():
    namespace: dict = {}
    exec("from service import *", namespace)
    del namespace["__builtins__"]
    assert sorted(namespace) == sorted(PUBLIC_API)
