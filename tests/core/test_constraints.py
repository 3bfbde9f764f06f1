"""A field's constraints are read once from its rules onto its description, and every door reads them
there: the validator, the JSON Schemas of OpenAPI and MCP, and the GraphQL generator. Where copies
used to disagree (the label's spelling, two size rules), the description decides, and these pin it."""
import ast
import math
from pathlib import Path

import pytest

from service import field
from service.core.declarations.constraints import Check, Target
from service.core.declarations.description import describe
from service.core.declarations.indexes import unique_indexes
from service.core.describing.schemas import input_schema, output_schema, write_body
from service.core.writing.uploads import Upload, check_uploads
from service.core.writing.validation import writable
from tests.core.test_rules import error_for as message

ROOT = Path(__file__).resolve().parents[2]


def test_the_description_carries_each_actions_constraints():
    declared = field("code").rules("required", "alpha_dash", "not_in:admin,root", "min:3") \
        .storing_rules("unique:users,code").updating_rules("sometimes", "in:a1,b2", "current_password")
    description = describe(declared)
    store, update = description.store, description.update
    assert (store.required, store.nullable, store.confirmed, store.current_password) == (True, False, False, False)
    assert [c.rule for c in store.checks] == ["alpha_dash", "not_in", "min", "max"]  # max: the text ceiling
    assert (store.low, store.high, store.refused, store.allowed) == (3, 65_535, ("admin", "root"), None)
    assert store.targets == (Target("unique", "users", "code"),) and update.targets == ()
    assert update.allowed == ("a1", "b2") and update.current_password
    assert description.constraints("patch") is update and description.constraints("store") is store


@pytest.mark.parametrize("declared, expected", [
    (field("post_id").rules("exists:posts"), Target("exists", "posts", "id")),
    (field("owner").rules("exists:users,email"), Target("exists", "users", "email")),
    (field("email").rules("unique:users"), Target("unique", "users", "email")),
])
def test_a_target_is_read_with_its_default_column(declared, expected):
    assert describe(declared).store.targets == (expected,)


@pytest.mark.parametrize("declared, writable_, server_set, uploadable", [
    (field("title"), True, False, False),
    (field("user_id").readonly(), False, True, False),
    (field("owner").value(lambda context: "me"), False, True, False),
    (field("cover").image(), False, False, True),
    (field("cover").image().readonly(), False, True, False),
])
def test_the_description_says_who_sets_a_field(declared, writable_, server_set, uploadable):
    description = describe(declared)
    assert (description.writable, description.server_set, description.uploadable) == (writable_, server_set, uploadable)
    assert (writable([declared]) == [declared]) is writable_
    assert output_schema(declared).get("readOnly", False) is server_set


def test_nullable_comes_from_the_declaration_or_the_rule():
    assert describe(field("a").nullable()).store.nullable
    assert describe(field("a").updating_rules("nullable")).update.nullable
    assert not describe(field("a").updating_rules("nullable")).store.nullable


# -- one label -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, label, sentence", [
    ("user_id", "user id", "User id"),
    ("userName", "userName", "UserName"),   # the documents once wrote "Username"
    ("ISBN_code", "ISBN code", "ISBN code"),  # and "Isbn code"
])
def test_one_label_names_the_field_in_messages_and_documents(name, label, sentence):
    declared = field(name).rules("max:3")
    assert describe(declared).label == label
    assert message(declared, "abcd") == f"The {label} may not be greater than 3 characters."
    assert input_schema(declared, "store")["description"] == f"{sentence}."
    confirmed = field(name).rules("confirmed")
    assert write_body([confirmed], "store")["properties"][f"{name}_confirmation"]["description"] == \
        f"The {label} again, to confirm it."
    image = field(name).image()
    assert input_schema(image, "store")["description"].startswith(f"{sentence}: ")
    errors, _ = check_uploads([image], {name: Upload("a.png", b"not an image")}, 1024)
    assert errors == {name: [f"The {label} must be an image."]}


# -- where the copies disagreed, the description decides ---------------------------------------------------

def test_the_tightest_of_several_size_rules_is_the_documented_bound():
    declared = field("code").rules("max:10", "min:2", "max:20", "min:1")
    assert message(declared, "x" * 11) == "The code may not be greater than 10 characters."
    assert message(declared, "x") == "The code must be at least 2 characters."
    schema = input_schema(declared, "store")
    assert (schema["minLength"], schema["maxLength"]) == (2, 10)  # the last rules, 1 and 20, were shown
    number = field("n").numeric().rules("between:1,9", "max:5")
    assert message(number, 6) == "The n may not be greater than 5."
    assert (input_schema(number, "store")["minimum"], input_schema(number, "store")["maximum"]) == (1, 5)


def test_only_values_every_in_rule_allows_are_listed():
    declared = field("size").rules("in:s,m,l", "in:m,l,xl", "not_in:l")
    assert message(declared, "s") == "The selected size is invalid."
    assert message(declared, "l") == "The selected size is invalid."
    assert message(declared, "m") is None
    schema = input_schema(declared, "store")
    assert schema["enum"] == ["m", "l"] and schema["not"] == {"enum": ["l"]}


def test_bounds_keep_the_number_they_were_written_as():
    description = describe(field("n").numeric().rules("between:1,2.5"))
    assert (description.store.low, description.store.high) == (1, 2.5)
    assert type(description.store.low) is int
    assert describe(field("n").numeric()).store.low == -math.inf
    assert Check("min", low=1).is_size and not Check("email").is_size


def test_unique_indexes_are_read_from_every_rule_list():
    fields = [field("email").rules("unique:users"), field("code").updating_rules("unique:codes,value")]
    assert unique_indexes(fields) == {("users", "email"), ("codes", "value")}


# -- nobody else reads rule strings ------------------------------------------------------------------------

READERS = {"service/core/declarations/constraints.py", "service/core/declarations/description.py", "service/core/declarations/rules.py",
           "service/core/declarations/fields.py"}
RULE_STRINGS = {"rule_list", "storing_rule_list", "updating_rule_list", "rules_for", "parse"}


def test_no_module_but_the_rules_engine_reads_rule_strings():
    """Rule strings are read by `service.core.declarations.constraints` (and checked by `service.core.declarations.rules`); every
    other module reads the description."""
    readers = set()
    for path in sorted((ROOT / "service").rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            if isinstance(node, ast.Attribute) and node.attr in RULE_STRINGS - {"parse"}:
                readers.add(relative)
            if isinstance(node, ast.Attribute) and node.attr == "parse" and getattr(node.value, "id", "") == "Rule":
                readers.add(relative)
    assert readers <= READERS, readers - READERS
