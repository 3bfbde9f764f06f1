"""Laravel-style rule strings compiled to voluptuous validators with Laravel-style messages.

What the rules constrain is read once, onto the field's description (`service.core.declarations.constraints`);
this module checks declarations and compiles those constraints into checks. A field's checks run
in order and stop at the first failure, so each field reports one message: the one that matters
first (`required`, then the type, then sizes). Rules that need the database (`unique`, `exists`) are
returned separately and run only when everything else about the field passed, as does
`current_password` (changing the field needs the acting user's password).
"""
import math
import re
import unicodedata
from typing import Any

import voluptuous as vol

from service.core.declarations.constraints import (FLOW, FORMATS, PATTERN_RULES, PATTERNS, SIZES, TYPES, Check,
                                                  Rule)
from service.core.declarations.description import INT64, describe, parse_date, to_boolean, to_number
from service.core.declarations.fields import Field
from service.core.kernel import DeclarationError

MESSAGES = {
    "required": "The {attribute} field is required.",
    "string": "The {attribute} must be a string.",
    "numeric": "The {attribute} must be a number.",
    "integer": "The {attribute} must be an integer.",
    "boolean": "The {attribute} field must be true or false.",
    "date": "The {attribute} is not a valid date.",
    "email": "The {attribute} must be a valid email address.",
    "url": "The {attribute} format is invalid.",
    "in": "The selected {attribute} is invalid.",
    "not_in": "The selected {attribute} is invalid.",
    "max.string": "The {attribute} may not be greater than {max} characters.",
    "max.numeric": "The {attribute} may not be greater than {max}.",
    "min.string": "The {attribute} must be at least {min} characters.",
    "min.numeric": "The {attribute} must be at least {min}.",
    "between.string": "The {attribute} must be between {min} and {max} characters.",
    "between.numeric": "The {attribute} must be between {min} and {max}.",
    "unique": "The {attribute} has already been taken.",
    "exists": "The selected {attribute} is invalid.",
    "confirmed": "The {attribute} confirmation does not match.",
    "current_password": "The password is incorrect.",
    "image": "The {attribute} must be an image.",
    **{pattern.name: pattern.message for pattern in PATTERN_RULES.values()},
}

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URL = re.compile(r"^https?://[^\s/$.?#].[^\s]*$", re.IGNORECASE)
_PATTERNS = {
    "url": _URL,
    **{pattern.name: pattern.regex for pattern in PATTERN_RULES.values()},
}


KNOWN = {*FLOW, *TYPES, *SIZES, *FORMATS, *PATTERNS, "in", "not_in", "image"}


def email_key(text: str) -> str:
    """The one spelling of an email address: NFKC-normalized (compatibility forms such as fullwidth
    letters become the plain ones they look like), trimmed, then lowercased. The `email` rule stores
    it, and login, its throttle and the token commands look addresses up by it."""
    return unicodedata.normalize("NFKC", text).strip().lower()


_FILE_NAME = re.compile(r"^[A-Za-z0-9_{][A-Za-z0-9._{}-]{0,100}$")
_DIRECTORY = re.compile(r"^[A-Za-z0-9_-]{1,64}(/[A-Za-z0-9_-]{1,64}){0,3}$")


def check_declaration(field: Field) -> None:
    """Raise DeclarationError for a rule this module does not know or cannot read."""
    for text in field.rule_list + field.storing_rule_list + field.updating_rule_list:
        rule = Rule.parse(text)
        if rule.name not in KNOWN:
            raise DeclarationError(f"field {field.name!r}: unknown rule {text!r}")
        if rule.name in ("max", "min") and not _is_number(rule.params[:1]):
            raise DeclarationError(f"field {field.name!r}: rule {text!r} needs a number")
        if rule.name == "between" and not (len(rule.params) == 2 and all(_is_number((p,)) for p in rule.params)):
            raise DeclarationError(f"field {field.name!r}: rule {text!r} needs two numbers")
        if rule.name in ("in", "not_in", "unique", "exists") and not rule.params:
            raise DeclarationError(f"field {field.name!r}: rule {text!r} needs parameters")
    _check_file_declaration(field)


def _is_number(params: tuple[str, ...]) -> bool:
    try:
        return bool(params) and math.isfinite(float(params[0]))
    except ValueError:
        return False


class FieldRules:
    """The compiled checks of one field for one action (store or update), from its description."""

    def __init__(self, field: Field, action: str) -> None:
        self.field = field
        self.description = describe(field)
        constraints = self.description.constraints(action)
        self.required = constraints.required
        self.nullable = constraints.nullable
        self.confirmed = constraints.confirmed
        self.needs_current_password = constraints.current_password
        self.database_rules = constraints.targets
        self.numeric = self.description.is_number
        # Wrapped in a Schema so it is compiled once: a bare All recompiles its validators per call.
        self._validator = vol.Schema(vol.All(self._type_check(), *(self._compile(c) for c in constraints.checks)))

    def message(self, key: str, **values: Any) -> str:
        rule = key.split(".", 1)[0]
        template = self.field.message_map.get(key) or self.field.message_map.get(rule) or MESSAGES[key]
        return template.format(attribute=self.description.label, **values)

    def validate(self, value: Any) -> Any:
        """The cleaned value; raises vol.Invalid with the field's message."""
        return self._validator(value)

    # -- compilation --------------------------------------------------------
    def _fail(self, key: str, **values: Any) -> vol.Invalid:
        return vol.Invalid(self.message(key, **values))

    def _type_check(self) -> Any:
        return {"boolean": self._as_boolean, "integer": self._as_integer, "number": self._as_number,
                "date": self._as_date}.get(self.description.type, self._as_string)

    def _as_string(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self._fail("string")
        return value

    def _as_number(self, value: Any) -> int | float:
        number = to_number(value)
        if number is None:
            raise self._fail("numeric")
        return number

    def _as_integer(self, value: Any) -> int:
        number = to_number(value)
        if number is None and self.field.kind == "numeric":
            raise self._fail("numeric")  # not a number at all: say that first
        if number is None or isinstance(number, float) and not number.is_integer():
            raise self._fail("integer")
        if not -INT64 - 1 <= int(number) <= INT64:
            raise self._fail("integer")  # an integral float too large for 64 bits
        return int(number)

    def _as_boolean(self, value: Any) -> bool:
        flag = to_boolean(value)  # the reading of every door: never "yes", "on" or 1.0
        if flag is None:
            raise self._fail("boolean")
        return flag

    def _as_date(self, value: Any) -> str:
        if not isinstance(value, str) or parse_date(value) is None:
            raise self._fail("date")
        return value

    def _compile(self, check: Check) -> Any:
        if check.rule == "email":
            return self._as_email
        if check.rule in _PATTERNS:
            pattern = _PATTERNS[check.rule]
            return self._predicate(lambda v: isinstance(v, str) and bool(pattern.match(v)), check.rule)
        if check.rule in ("in", "not_in"):
            allowed = set(check.values)
            inside = check.rule == "in"
            return self._predicate(lambda v: (_as_text(v) in allowed) == inside, check.rule)
        if check.rule == "image":
            return self._predicate(lambda v: True, "image")  # content checks live with file uploads
        return self._size(check)

    def _as_email(self, value: Any) -> str:
        """As `email_key` writes it, so `A@example.com `, `a@example.com` and the fullwidth
        `ａ@example.com` are one address (one account, one unique value); control and format
        characters are refused, not stored."""
        text = email_key(value) if isinstance(value, str) else None
        if text is None or not _EMAIL.match(text) or any(unicodedata.category(c) in ("Cc", "Cf") for c in text):
            raise self._fail("email")
        return text

    def _predicate(self, test: Any, key: str) -> Any:
        def check(value: Any) -> Any:
            if not test(value):
                raise self._fail(key)
            return value
        return check

    def _size(self, size_check: Check) -> Any:
        low, high = size_check.low, size_check.high
        kind = "numeric" if self.numeric else "string"
        shown = {"min": _shown(low), "max": _shown(high)}

        def check(value: Any) -> Any:
            size = value if self.numeric else len(value)
            if not low <= size <= high:
                raise self._fail(f"{size_check.rule}.{kind}", **shown)
            return value
        return check


def _shown(bound: float) -> str:
    return str(int(bound)) if math.isfinite(bound) and float(bound).is_integer() else str(float(bound))


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _check_file_declaration(field: Field) -> None:
    if field.file_name is not None and (not _FILE_NAME.match(field.file_name) or ".." in field.file_name):
        raise DeclarationError(f"field {field.name!r}: store_as({field.file_name!r}) is not a plain file name")
    if field.directory is not None and not _DIRECTORY.match(field.directory):
        raise DeclarationError(f"field {field.name!r}: path({field.directory!r}) must be plain folder names")
    if field.disk_name not in (None, "local", "gridfs"):
        raise DeclarationError(f"field {field.name!r}: unknown disk {field.disk_name!r} (local or gridfs)")
