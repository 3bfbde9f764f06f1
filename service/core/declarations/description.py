"""One description of a field: what its values are, read once from its kind and rules.

Every door reads it instead of re-deriving a type or re-reading a rule string: the validator
(`service.core.declarations.rules`), the JSON Schemas of OpenAPI and MCP
(`service.core.describing.schemas`), the GraphQL generator (`graphql_kind`, `confirmed`), the coercion
of query-string values and the filter operators a field allows. A new field kind or a new value type
is added here (and its check in `rules.py`); a new filter operator is one entry in
`service.core.kernel.operators`.

Besides its type, a description carries the field's label (how messages and documents name it), whether
a body may write it, and its constraints for storing and for updating (`service.core.declarations.constraints`).

A field has one type for every action, read from its kind and the type rules of all its rule lists
(`rules`, `storing_rules`, `updating_rules`): the first of boolean (kind or rule), integer (rule),
number (kind or rule), date (kind or rule), else text — the order the validator has always checked in.
"""
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from service.core.declarations.constraints import Constraints, Rule, read
from service.core.declarations.fields import Field
from service.core.kernel import BadRequest, attribute_label, for_type

INT64 = 2**63 - 1
TEXT_KINDS = ("string", "textarea", "password")
INT32 = (-(2 ** 31), 2 ** 31 - 1)  # GraphQL's Int

_JSON_TYPES = {"boolean": "boolean", "integer": "integer", "number": "number"}
# The one reading of a boolean on every door: a JSON or form body, a query string, a filter object.
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


_INTEGER_TEXT = re.compile(r"^[+-]?\d{1,20}$", re.ASCII)
_DECIMAL_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$", re.ASCII)


def to_number(value: Any) -> int | float | None:
    """A finite number that fits in 64 bits, from a number or a plain numeric string; else None.
    Strings are read strictly: no digit separators, no "nan", no "inf"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER_TEXT.match(text):
            value = int(text)
        elif len(text) <= 32 and _DECIMAL_TEXT.match(text):
            value = float(text)
        else:
            return None
    if isinstance(value, int):
        return value if -INT64 - 1 <= value <= INT64 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def iso(value: Any) -> Any:
    """A datetime as the service writes dates (UTC, milliseconds, `Z`); anything else as it is."""
    if type(value) is datetime and not value.fold:
        return _iso_kept(value)
    return _iso(value) if isinstance(value, datetime) else value


@lru_cache(maxsize=4096)
def _iso_kept(value: datetime) -> str:
    # Writing a date costs about a microsecond, and a page writes two or more per record: the dates of
    # the records read again and again are written once. Equal datetimes are one instant, written alike
    # (a fold of 1, which compares equal to another instant, is not kept).
    return _iso(value)


def _iso(value: datetime) -> str:
    # The stored dates are UTC (naive or aware): written as they are, without a conversion.
    text = value.isoformat(timespec="milliseconds")
    if value.tzinfo is None:
        return text + "Z"
    if text.endswith("+00:00"):
        return text[:-6] + "Z"
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_boolean(value: Any) -> bool | None:
    """A boolean from true/false, 1/0, or their texts ("true", "false", "1", "0", in any case); else
    None. Every door reads booleans with it: bodies, query strings and filter objects alike, so "yes",
    "on", 1.0 or 2 are refused everywhere."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _BOOLEANS.get(str(value))
    if isinstance(value, str):
        return _BOOLEANS.get(value.lower())
    return None


@dataclass(frozen=True)
class Description:
    name: str
    kind: str   # as declared: string, textarea, password, numeric, boolean, date, image
    type: str   # what a value is: "boolean", "integer", "number", "date" or "string"
    fits_32_bits: bool  # an integer whose rules keep it within GraphQL's Int, on store and on update
    label: str          # how messages and documents name it: `user_id` is "user id"
    writable: bool      # a JSON body may set it: not read-only, not a file, not filled by `value(...)`
    server_set: bool    # read-only or filled by `value(...)`: the server decides its value
    uploadable: bool    # an image a multipart form may send (not read-only)
    store: Constraints
    update: Constraints

    def constraints(self, action: str) -> Constraints:
        """The constraints an action validates with: store's, or update's for PUT, PATCH and the profile."""
        return self.store if action == "store" else self.update

    @property
    def confirmed(self) -> bool:
        """Whether a body sends `<name>_confirmation` beside it, on store or on update."""
        return self.store.confirmed or self.update.confirmed

    @property
    def is_text(self) -> bool:
        """Free text: gets the implicit length ceiling; an empty string is a value, not "no value"."""
        return self.type == "string" and self.kind in TEXT_KINDS

    @property
    def is_number(self) -> bool:
        return self.type in ("integer", "number")

    @property
    def json_type(self) -> str:
        return _JSON_TYPES.get(self.type, "string")

    @property
    def graphql_kind(self) -> str:
        """The key of graphql.toml's `[types]` table that gives the field's scalar."""
        if self.type == "integer":
            return "integer" if self.fits_32_bits else "long"
        if self.type == "number":
            return "numeric"
        if self.type in ("boolean", "date"):
            return self.type
        return self.kind

    @property
    def operators(self) -> tuple[str, ...]:
        """The names of the filter operators its type allows (`service.core.kernel.operators`)."""
        return tuple(op.name for op in for_type(self.type))

    def coerce(self, raw: str) -> Any:
        """A query-string value in the field's own type; "null" means a missing value."""
        if raw == "null":
            return None
        if self.is_number:  # any number, integers too: a filter finds what is stored, even 2.5 written around the rules
            return self._number(raw)
        if self.type == "boolean":
            return self._flag(raw)
        if self.type == "date" and parse_date(raw) is None:
            raise self._bad_filter("a date")
        return raw

    def coerce_value(self, value: Any) -> Any:
        """A typed value (a JSON or GraphQL argument) in the field's own type; None means a missing
        value. Numbers may come as numeric text too (GraphQL's Long is written as a string)."""
        if value is None:
            return None
        if self.is_number:
            return self._number(value)
        if self.type == "boolean":
            return self._flag(value)
        if not isinstance(value, str):
            raise self._bad_filter("a date" if self.type == "date" else "a text")
        if self.type == "date" and parse_date(value) is None:
            raise self._bad_filter("a date")
        return value

    def day_after(self, raw: str) -> str | None:
        """For a date-only value ("2024-01-02") of a date field, the next day: an upper bound that
        includes the whole day is "before the next day" (stored dates are ISO texts)."""
        if self.type != "date" or not isinstance(raw, str) or not _DAY.match(raw):
            return None
        return (date.fromisoformat(raw) + timedelta(days=1)).isoformat()

    def _number(self, value: Any) -> int | float:
        number = to_number(value)
        if number is None:
            raise self._bad_filter("a number")
        return number

    def _flag(self, value: Any) -> bool:
        flag = to_boolean(value)
        if flag is None:
            raise self._bad_filter("true or false")
        return flag

    def _bad_filter(self, what: str) -> BadRequest:
        message = f"The {self.name} filter must be {what}."
        return BadRequest(message, {self.name: [message]})


_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)


def parse_date(text: str) -> datetime | None:
    """An ISO date or date-time ("Z" allowed), as the validator and the filters accept them."""
    if len(text) > 40:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def describe(field: Field) -> Description:
    """The field's description (cached: fields are rebuilt per request, their declarations repeat)."""
    return _describe(field.name, field.kind, tuple(field.rule_list), tuple(field.storing_rule_list),
                     tuple(field.updating_rule_list), field.is_nullable, field.is_readonly,
                     field.value_callback is not None)


@lru_cache(maxsize=4096)
def _describe(name: str, kind: str, rules: tuple[str, ...], storing: tuple[str, ...],
              updating: tuple[str, ...], nullable: bool, readonly: bool, valued: bool) -> Description:
    names = {Rule.parse(text).name for text in (*rules, *storing, *updating)}
    if kind == "boolean" or "boolean" in names:
        type_ = "boolean"
    elif "integer" in names:
        type_ = "integer"
    elif kind == "numeric" or "numeric" in names:
        type_ = "number"
    elif kind == "date" or "date" in names:
        type_ = "date"
    else:
        type_ = "string"
    is_text = type_ == "string" and kind in TEXT_KINDS
    store = read(name, (*rules, *storing), nullable, is_text)
    update = read(name, (*rules, *updating), nullable, is_text)
    fits = type_ == "integer" and all(INT32[0] <= c.low and c.high <= INT32[1] for c in (store, update))
    file = kind == "image"
    return Description(name, kind, type_, fits, label=attribute_label(name),
                       writable=not (readonly or file or valued), server_set=readonly or valued,
                       uploadable=file and not readonly, store=store, update=update)
