"""Rule strings compile to validators with Laravel-style messages; `validate` runs a payload through them."""
import math

import pytest
import voluptuous as vol

from service import Context, ValidationFailed, field
from service.core.declarations.description import to_boolean
from service.core.declarations.rules import FieldRules
from service.core.writing.validation import validate
from tests.booleans import REFUSED, TYPED


def error_for(declared, value, action="store"):
    """The field's message for `value`, or None when the value passes."""
    try:
        FieldRules(declared, action).validate(value)
    except vol.Invalid as error:
        return str(error.msg)
    return None


def cleaned(declared, value, action="store"):
    return FieldRules(declared, action).validate(value)


async def errors_for(restify, fields, payload, action="store", record_id=None):
    with pytest.raises(ValidationFailed) as caught:
        await validate(restify, fields, payload, action, record_id)
    return caught.value.errors


# -- one rule at a time -------------------------------------------------------------

@pytest.mark.parametrize("declared, value, message", [
    (field("title").rules("max:255"), "x" * 256, "The title may not be greater than 255 characters."),
    (field("name").rules("min:3"), "ab", "The name must be at least 3 characters."),
    (field("code").rules("between:2,4"), "abcde", "The code must be between 2 and 4 characters."),
    (field("age").numeric().rules("min:18"), 17, "The age must be at least 18."),
    (field("age").numeric().rules("min:18"), "17", "The age must be at least 18."),
    (field("age").numeric().rules("max:99"), 100, "The age may not be greater than 99."),
    (field("age").numeric().rules("between:18,65"), 66, "The age must be between 18 and 65."),
    (field("ratio").numeric().rules("between:0.5,1.5"), 2, "The ratio must be between 0.5 and 1.5."),
    (field("email").rules("email"), "not-an-email", "The email must be a valid email address."),
    (field("age").rules("integer"), 17.5, "The age must be an integer."),
    (field("age").rules("integer"), "seven", "The age must be an integer."),
    (field("price").rules("numeric"), "cheap", "The price must be a number."),
    (field("start_date").date(), "2024-13-01", "The start date is not a valid date."),
    (field("due").rules("date"), "tomorrow", "The due is not a valid date."),
    (field("status").rules("in:draft,published"), "archived", "The selected status is invalid."),
    (field("title"), 5, "The title must be a string."),
])
def test_failing_rule_reports_its_laravel_message(declared, value, message):
    assert error_for(declared, value) == message


@pytest.mark.parametrize("declared, value, expected", [
    (field("title").rules("max:255"), "x" * 255, "x" * 255),
    (field("age").numeric().rules("min:18"), 18, 18),
    (field("age").numeric().rules("between:18,65"), "65", 65),
    (field("price").rules("numeric"), "17.5", 17.5),
    (field("age").rules("integer"), "18", 18),
    (field("age").rules("integer"), 18.0, 18),
    (field("email").rules("email"), "ann@example.com", "ann@example.com"),
    (field("start_date").date(), "2024-01-31", "2024-01-31"),
    (field("start_date").date(), "2024-01-31T10:00:00Z", "2024-01-31T10:00:00Z"),
    (field("status").rules("in:draft,published"), "draft", "draft"),
])
def test_passing_value_is_cleaned_to_the_fields_type(declared, value, expected):
    result = cleaned(declared, value)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("value, expected", TYPED)
def test_boolean_accepts_true_false_and_their_spellings(value, expected):
    assert cleaned(field("active").boolean(), value) is expected
    assert to_boolean(value) is expected


@pytest.mark.parametrize("value", [*REFUSED, None, []])
def test_boolean_rejects_anything_else(value):
    """"yes", "on", "no" and "off" too: a body reads booleans as a query string does."""
    assert error_for(field("active").boolean(), value) == "The active field must be true or false."
    assert to_boolean(value) is None


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30, math.nan, math.inf, -math.inf, "NaN", "inf", "1e999"])
def test_numbers_beyond_int64_and_non_finite_are_rejected(value):
    assert error_for(field("count").numeric(), value) == "The count must be a number."
    assert error_for(field("count").rules("integer"), value) == "The count must be an integer."


def test_int64_bounds_are_accepted():
    assert cleaned(field("count").numeric(), 2**63 - 1) == 2**63 - 1
    assert cleaned(field("count").numeric(), -(2**63)) == -(2**63)


@pytest.mark.parametrize("declared", [field("note"), field("note").textarea()])
def test_text_fields_have_an_implicit_65535_character_ceiling(declared):
    assert error_for(declared, "x" * 65_535) is None
    assert error_for(declared, "x" * 65_536) == "The note may not be greater than 65535 characters."


def test_own_max_replaces_the_implicit_text_ceiling():
    assert error_for(field("note").textarea().rules("max:70000"), "x" * 70_000) is None


@pytest.mark.parametrize("declared, value, expected", [
    (field("price").rules("numeric"), 70_000, 70_000),
    (field("count").rules("integer"), 70_000, 70_000),
    (field("active").rules("boolean"), True, True),
])
def test_implicit_text_ceiling_skips_fields_typed_by_their_rules(declared, value, expected):
    assert cleaned(declared, value) == expected


@pytest.mark.parametrize("messages, name, expected", [
    ({"max": "Keep {attribute} short."}, "title", "Keep title short."),
    ({"max.string": "The {attribute} is too long."}, "user_name", "The user name is too long."),
    ({"min": "Unused."}, "title", "The title may not be greater than 3 characters."),
])
def test_messages_override_per_rule_with_attribute_placeholder(messages, name, expected):
    assert error_for(field(name).rules("max:3").messages(messages), "abcd") == expected


# -- validate: the whole payload ------------------------------------------------------

async def test_required_field_missing_blank_or_null_is_reported(restify):
    fields = [field("email").required(), field("name").required()]
    assert await errors_for(restify, fields, {"name": ""}) == {
        "email": ["The email field is required."], "name": ["The name field is required."],
    }
    assert await errors_for(restify, fields, {"email": None, "name": "Ann"}) == {"email": ["The email field is required."]}


async def test_required_message_can_be_overridden(restify):
    fields = [field("user_name").required().messages({"required": "We need your {attribute}."})]
    assert await errors_for(restify, fields, {}) == {"user_name": ["We need your user name."]}


async def test_unknown_payload_keys_are_ignored(restify):
    payload = {"title": "Hello", "rogue": 1, "$where": "1", "id": "abc", "_id": "abc"}
    assert await validate(restify, [field("title")], payload, "store") == {"title": "Hello"}


async def test_readonly_and_value_fields_are_not_taken_from_the_payload(restify):
    fields = [field("title"), field("user_id").readonly(), field("owner").value(lambda context: "me")]
    payload = {"title": "Hello", "user_id": "someone", "owner": "someone"}
    assert await validate(restify, fields, payload, "store") == {"title": "Hello"}


async def test_confirmed_needs_a_matching_confirmation(restify):
    fields = [field("secret").rules("confirmed")]
    assert await errors_for(restify, fields, {"secret": "abc", "secret_confirmation": "abd"}) == {
        "secret": ["The secret confirmation does not match."],
    }
    assert await validate(restify, fields, {"secret": "abc", "secret_confirmation": "abc"}, "store") == {"secret": "abc"}


async def test_nullable_accepts_null_where_other_fields_refuse_it(restify):
    assert await validate(restify, [field("bio").textarea().nullable()], {"bio": None}, "store") == {"bio": None}
    assert await validate(restify, [field("age").numeric().nullable()], {"age": ""}, "store") == {"age": None}
    assert await errors_for(restify, [field("bio").textarea()], {"bio": None}) == {"bio": ["The bio must be a string."]}


@pytest.mark.parametrize("action, payload, expected", [
    ("store", {}, {"views": 0}),
    ("store", {"views": 7}, {"views": 7}),
    ("update", {}, {}),
    ("patch", {}, {}),
])
async def test_default_applies_only_when_storing_without_a_value(restify, action, payload, expected):
    assert await validate(restify, [field("views").numeric().default(0)], payload, action) == expected


@pytest.mark.parametrize("action, payload, errors", [
    ("store", {}, {"code": ["The code field is required."]}),
    ("store", {"code": "short"}, {"code": ["The code must be at least 8 characters."]}),
    ("update", {}, None),
    ("update", {"code": "short"}, {"code": ["The code must be at least 8 characters."]}),
    ("patch", {"code": "short"}, {"code": ["The code must be at least 8 characters."]}),
])
async def test_storing_rules_and_updating_rules_apply_to_their_action(restify, action, payload, errors):
    fields = [field("code").storing_rules("required", "min:8").updating_rules("min:8")]
    if errors is None:
        assert await validate(restify, fields, payload, action) == {}
    else:
        assert await errors_for(restify, fields, payload, action) == errors


async def test_put_validates_every_field_and_patch_only_those_sent(restify):
    fields = [field("title").required(), field("body").textarea().nullable()]
    assert await errors_for(restify, fields, {"body": "new"}, "update") == {"title": ["The title field is required."]}
    assert await validate(restify, fields, {"body": "new"}, "patch") == {"body": "new"}
    assert await errors_for(restify, fields, {"title": ""}, "patch") == {"title": ["The title field is required."]}


async def test_huge_and_non_finite_numbers_are_rejected_in_a_payload(restify):
    fields = [field("views").numeric(), field("score").numeric()]
    assert await errors_for(restify, fields, {"views": 2**64, "score": math.nan}) == {
        "views": ["The views must be a number."], "score": ["The score must be a number."],
    }


@pytest.mark.parametrize("rule", ["unique:users,email", "unique:users"])
async def test_unique_refuses_a_taken_value_except_on_its_own_record(restify, rule):
    ann = await restify.db.collection("users").insert({"email": "ann@example.com"})
    fields = [field("email").rules("email", rule)]
    taken = {"email": "ann@example.com"}
    assert await errors_for(restify, fields, taken) == {"email": ["The email has already been taken."]}
    assert await validate(restify, fields, taken, "update", record_id=ann["id"]) == taken
    assert await validate(restify, fields, {"email": "bob@example.com"}, "store") == {"email": "bob@example.com"}


async def test_unique_on_the_demo_user_repository(restify):
    await restify.db.collection("users").insert({"email": "ann@example.com"})
    users = restify.resource("users")
    errors = await errors_for(restify, users.fields(Context(action="patch")), {"name": "Ann", "email": "ann@example.com"}, "patch")
    assert errors == {"email": ["The email has already been taken."]}


async def test_exists_needs_a_stored_record(restify):
    post = await restify.db.collection("posts").insert({"title": "Hello"})
    fields = [field("post_id").rules("exists:posts")]
    for missing in ("0123456789abcdef01234567", "not-an-id"):
        assert await errors_for(restify, fields, {"post_id": missing}) == {"post_id": ["The selected post id is invalid."]}
    assert await validate(restify, fields, {"post_id": post["id"]}, "store") == {"post_id": post["id"]}


async def test_password_fields_are_stored_as_argon2_hashes(restify):
    clean = await validate(restify, [field("password").password().rules("min:8")], {"password": "secret-pass"}, "store")
    assert clean["password"].startswith("$argon2")
    assert await restify.passwords.verify(clean["password"], "secret-pass")
