"""Field declarations: a fluent builder. What its values are (type, coercion, operators) is read
from this state once, by `service.core.declarations.description`, which every door uses."""
import sys
from collections.abc import Callable
from functools import lru_cache
from types import FrameType
from typing import Any

from service.core.declarations.field_policy import ByPolicy
from service.core.kernel import DeclarationError

_NO_DEFAULT = object()


def _split(rules: tuple[str | list[str], ...]) -> list[str]:
    if all(type(rule) is str for rule in rules):
        return list(_split_text(rules))
    return _split_any(rules)


@lru_cache(maxsize=1024)
def _split_text(rules: tuple[str, ...]) -> tuple[str, ...]:
    # Fields are declared on every request, mostly with the same rule texts: each text is split once.
    return tuple(_split_any(rules))


def _split_any(rules: tuple[str | list[str], ...]) -> list[str]:
    flat: list[str] = []
    for rule in rules:
        items = rule if isinstance(rule, (list, tuple)) else str(rule).split("|")
        flat.extend(item.strip() for item in items if item and item.strip())
    return flat


def _declared_at() -> tuple[str, int] | None:
    """file and line of the code that called field(...): where an author looks for a bad declaration."""
    frame: FrameType | None = sys._getframe(2)  # past Field.__init__, which calls this
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


class Field(ByPolicy):
    # Every field starts from these; a builder method sets what it changes on the field itself. A
    # repository's `fields(request)` builds its fields on every request, so they are not copied per field.
    kind = "string"
    rule_list: list[str] = []          # replaced, never changed in place (as are the two below and the map)
    storing_rule_list: list[str] = []
    updating_rule_list: list[str] = []
    message_map: dict[str, str] = {}
    default_value: Any = _NO_DEFAULT
    is_nullable = False
    is_searchable = False
    is_text = False          # searched through the collection's text index where the server has one
    is_sortable = False
    is_matchable = False
    is_groupable = False     # a group key of aggregations (`service.core.reading.grouping`)
    is_aggregatable = False  # summed, averaged, its least and greatest in aggregations
    is_readonly = False
    is_hidden = False
    value_callback: Callable[[Any], Any] | None = None
    file_name: str | None = None
    disk_name: str | None = None
    directory: str | None = None
    # -- by policy (service.core.declarations.exposure): who sees, stores and updates it
    see_rule: Callable[[Any, Any], Any] | None = None
    store_rule: Callable[[Any, Any], Any] | None = None
    update_rule: Callable[[Any, Any], Any] | None = None
    hidden_actions: frozenset[str] = frozenset()  # "index", "show"
    hidden_doors: frozenset[str] = frozenset()    # "rest", "graphql", "mcp"
    # -- computed (service.core.reading.computed): read-only values worked out per answer, never stored
    compute: Callable[[Any, Any], Any] | None = None
    compute_many: Callable[[list[Any], Any], Any] | None = None
    # -- one request's view (set on the copies `exposure.fields_seen` makes, never on a declaration)
    is_private = False  # the user may not ask about it: no filter, sort, search nor fieldset names it
    shown_for: Callable[[dict[str, Any]], bool] | None = None  # whether a record's answer shows it

    def __init__(self, name: str) -> None:
        self.name = name
        self.declared_at = _declared_at()

    # -- validation ---------------------------------------------------------
    def required(self) -> "Field":
        return self.rules("required")

    def nullable(self) -> "Field":
        self.is_nullable = True
        return self

    def rules(self, *rules: str | list[str]) -> "Field":
        self.rule_list = [*self.rule_list, *_split(rules)]
        return self

    def storing_rules(self, *rules: str | list[str]) -> "Field":
        self.storing_rule_list = [*self.storing_rule_list, *_split(rules)]
        return self

    def updating_rules(self, *rules: str | list[str]) -> "Field":
        self.updating_rule_list = [*self.updating_rule_list, *_split(rules)]
        return self

    def messages(self, messages: dict[str, str]) -> "Field":
        self.message_map = {**self.message_map, **messages}
        return self

    def default(self, value: Any) -> "Field":
        self.default_value = value
        return self

    @property
    def has_default(self) -> bool:
        return self.default_value is not _NO_DEFAULT

    def value(self, callback: Callable[[Any], Any]) -> "Field":
        """Always fill this field from `callback(context)` on store, whatever the body says."""
        self.value_callback = callback
        return self

    # -- kinds --------------------------------------------------------------
    def _kind(self, kind: str) -> "Field":
        self.kind = kind
        return self

    def string(self) -> "Field":
        return self._kind("string")

    def textarea(self) -> "Field":
        return self._kind("textarea")

    def numeric(self) -> "Field":
        return self._kind("numeric")

    def boolean(self) -> "Field":
        return self._kind("boolean")

    def date(self) -> "Field":
        return self._kind("date")

    def integer(self) -> "Field":
        """A whole number (a number with the `integer` rule)."""
        return self._kind("numeric").rules("integer")

    def image(self) -> "Field":
        return self._kind("image")

    def password(self) -> "Field":
        """Write-only: stored as a password hash and never serialized."""
        self.is_hidden = True
        self.check_hidden()
        return self._kind("password")

    # -- files --------------------------------------------------------------
    def store_as(self, name: str) -> "Field":
        self.file_name = name
        return self

    def disk(self, name: str) -> "Field":
        self.disk_name = name
        return self

    def path(self, directory: str) -> "Field":
        self.directory = directory
        return self

    # -- exposure -----------------------------------------------------------
    def _exposed(self, flag: str) -> "Field":
        """Sets `flag`, which lets requests ask about the field's values (refused on a hidden one)."""
        setattr(self, flag, True)
        if self.is_hidden or self.compute is not None or self.compute_many is not None:
            self.check_hidden()
        return self

    def searchable(self, text: bool = False) -> "Field":
        """`search=` looks in it. `text=True`: through a text index where the database has one (MongoDB:
        words rather than substrings, and `sort=relevance`); the embedded server keeps the substring test."""
        self.is_text = self.is_text or text
        return self._exposed("is_searchable")

    def sortable(self) -> "Field":
        return self._exposed("is_sortable")

    def matchable(self) -> "Field":
        return self._exposed("is_matchable")

    def groupable(self) -> "Field":
        """Records may be counted and summed by its values (`<r>/aggregate?group=<name>`; a date by
        `day`, `week`, `month` or `year`)."""
        return self._exposed("is_groupable")

    def aggregatable(self) -> "Field":
        """A number aggregations may sum, average and take the least and greatest of (`metrics=sum:<name>`)."""
        return self._exposed("is_aggregatable")

    def readonly(self) -> "Field":
        self.is_readonly = True
        return self

    def hidden(self) -> "Field":
        self.is_hidden = True
        self.check_hidden()
        return self

    # -- computed -----------------------------------------------------------
    def computed(self, compute: Callable[[Any, Any], Any]) -> "Field":
        """A read-only value, `compute(record, context)` (plain or async) for each record answered; never
        stored, never filtered or sorted on. For a value that needs queries use `computed_many`."""
        self.compute = compute
        return self._computed()

    def computed_many(self, compute: Callable[[list[Any], Any], Any]) -> "Field":
        """As `computed`, for a whole page at once: `compute(records, context)` (plain or async) returns
        the values in the records' order, or a dict by record id (a missing id: null). It is called once
        per list of records answered (a page, a relation's records, one record), so a value that needs
        a query costs one query per page, not one per record (`context.count_by`, `context.related`)."""
        self.compute_many = compute
        return self._computed()

    def _computed(self) -> "Field":
        self.is_readonly = True
        self.check_hidden()
        return self

    @property
    def is_computed(self) -> bool:
        return self.compute is not None or self.compute_many is not None

    def check_hidden(self) -> None:
        """A hidden field answers no question about its values: a filter on it tells who has a value,
        and a sort on it orders records by it (and puts it in the cursors of the pages). So hidden
        (password fields included) excludes matchable, sortable and searchable, in any order."""
        if not self.is_hidden and self.compute is None and self.compute_many is None:
            return  # the common case: nothing to refuse
        exposed = [name for name, on in (("matchable", self.is_matchable), ("sortable", self.is_sortable),
                                          ("searchable", self.is_searchable), ("groupable", self.is_groupable),
                                          ("aggregatable", self.is_aggregatable)) if on]
        if self.is_hidden and exposed:
            error = DeclarationError(f"field {self.name!r} is hidden, so it cannot be {' or '.join(exposed)}: "
                                     "filters, sort orders and search would reveal its values")
            error.location = self.declared_at
            raise error
        if self.is_computed and exposed:
            error = DeclarationError(f"field {self.name!r} is computed, so it cannot be {' or '.join(exposed)}: "
                                     "its values are not stored, and the database cannot filter or order by them")
            error.location = self.declared_at
            raise error

    # -- derived ------------------------------------------------------------
    @property
    def is_file(self) -> bool:
        return self.kind == "image"

    def rules_for(self, action: str) -> list[str]:
        extra = self.storing_rule_list if action == "store" else self.updating_rule_list
        return self.rule_list + extra

    def __repr__(self) -> str:
        return f"<Field {self.name} {self.kind}>"


def field(name: str) -> Field:
    return Field(name)


# Stored on every record by the write path (`writing/writes.py`): every repository sorts by them, so
# `sort=-created_at` is newest first anywhere.
TIMESTAMPS = ("created_at", "updated_at")
# Set when a record of a repository with `soft_deletes` is trashed (null again once restored): an
# attribute every answer of such a repository carries, which no body may write.
DELETED_AT = "deleted_at"


def trash_field() -> Field:
    """The `deleted_at` attribute of a repository with `soft_deletes`, unless it declares its own."""
    return Field(DELETED_AT).date().nullable().readonly()


def sort_keys(fields: list[Field]) -> list[str]:
    """The keys `sort` takes on a repository (besides relation sorts): its sortable fields, the
    timestamps, then id (also the tie-break)."""
    return [*(f.name for f in fields if f.is_sortable and f.name not in TIMESTAMPS), *TIMESTAMPS, "id"]
