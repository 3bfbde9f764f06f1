"""Fields by policy: which of a repository's fields one request sees, and which it may write.

`Resource.fields(context)` passes the declared fields through `fields_seen`, so every reader of
that list (serializing, sparse fieldsets, query parsing, search, sorts, live feeds, the MCP tools
of a session) gets this request's view without asking again:

- a field hidden from the door (`hide_from`) or the action (`hide_on_index`, `hide_on_show`) is
  hidden as `.hidden()` is: in no answer, no filter, sort, search or fieldset;
- a field with `can_see(rule)` is shown in a record's answer only when `rule(user, record)` is
  true (`shown_for`); when `rule(user, None)` is false the user may not ask about it at all
  (`is_private`): naming it in a filter, sort, search or fieldset is the 400 of an unknown field,
  so a filter cannot tell who has which value.

A context that describes rather than answers (the GraphQL schema, OpenAPI, declaration checks) sees
every field its door shows: the descriptions mark the fields by policy as possibly absent.

Writes: `refused_field` names the first field a body sends that `can_store` / `can_update` refuse
(the write path answers 403 naming it; the value is not silently dropped). A rule that raises
denies, and is logged, as a policy method that raises does.
"""
import logging
from collections.abc import Iterable
from copy import copy
from typing import TYPE_CHECKING, Any

from service.core.declarations.context import Context
from service.core.declarations.fields import Field

if TYPE_CHECKING:
    from service.core.declarations.models import Model

log = logging.getLogger("restify.policies")
DESCRIBING = "describing"  # `context.extras` key: the context describes an API (OpenAPI), it answers no one
_DESCRIBING_ACTIONS = ("schema", "declaration")
_SINGLE = ("show", "store", "update", "patch", "profile", "restore")  # the actions that answer one record


def asks(rule: Any, name: str, user: Any, record: Any) -> bool:
    """A field's rule answered; one that raises denies, and is logged (as a policy that raises)."""
    try:
        return bool(rule(user, record))
    except Exception:  # a broken rule must fail closed, and loudly
        log.exception("the rule of field %s raised; denying", name)
        return False


def describing(context: Context) -> bool:
    return context.action in _DESCRIBING_ACTIONS or bool(context.extras.get(DESCRIBING))


def hidden_on(field: Field, context: Context) -> bool:
    """Whether the door or the action of `context` leaves `field` out."""
    if context.door in field.hidden_doors:
        return True
    if describing(context):
        return False
    # An aggregation reads lists of records: what lists leave out, it does too.
    return ("index" in field.hidden_actions and context.action in ("index", "aggregate")) or \
        ("show" in field.hidden_actions and context.action in _SINGLE)


def fields_seen(fields: Iterable[Field], context: Context, model: "type[Model]") -> list[Field]:
    """The fields as `context` sees them: those by policy copied and adjusted, the others as declared."""
    return [_seen(f, context, model) if f.by_policy else f for f in fields]


def _seen(field: Field, context: Context, model: "type[Model]") -> Field:
    view = copy(field)
    rule, user = field.see_rule, context.user
    if hidden_on(field, context):
        view.is_hidden = True
    elif rule is not None and not describing(context):
        view.is_private = not asks(rule, field.name, user, None)
        view.shown_for = lambda document: asks(rule, field.name, user, model(document))
    if view.is_hidden or view.is_private:
        view.is_matchable = view.is_sortable = view.is_searchable = False
        view.is_groupable = view.is_aggregatable = False
    return view


def askable(fields: Iterable[Field]) -> list[Field]:
    """The fields a user may name in a fieldset: shown, and not private to them."""
    return [f for f in fields if not (f.is_hidden or f.is_private)]


def refused_field(fields: Iterable[Field], sent: Iterable[str], user: Any, record: Any) -> str | None:
    """The first field of `sent` its `can_store` (no `record`) or `can_update` rule refuses to `user`."""
    names = set(sent)
    for field in fields:
        rule = field.store_rule if record is None else field.update_rule
        if rule is not None and field.name in names and not asks(rule, field.name, user, record):
            return field.name
    return None
