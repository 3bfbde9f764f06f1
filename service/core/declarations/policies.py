"""Policies: which user may do what with which record.

A model without a registered policy is denied everything (secure default),
and that is logged once, naming the model, so the cause is easy to find.

`scope(user)` is a policy's read rule: every query that reads the model's records
(index pages and totals, relation loads, single records) carries it, so what a user
may not see is neither listed, counted nor told apart from what does not exist. The
read rule as a whole (`allow_restify`, `scope`, then `show`) is composed once, in
`service.core.reading.visibility`.
"""
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from service.core.declarations.abilities import user_can
from service.core.declarations.models import Model
from service.core.declarations.scopes import compile_alternatives
from service.core.kernel import DeclarationError

log = logging.getLogger("restify.policies")
_warned_show: set[str] = set()  # policies already reported for refusing rows their scope let through


@dataclass(frozen=True)
class AnyOf:
    """A read rule: a record is in scope when it has every value of at least one alternative."""
    alternatives: tuple[dict[str, Any], ...]


def any_of(*alternatives: Mapping[str, Any]) -> AnyOf:
    """`scope()` for rules such as "published or mine":
    `any_of({"published": True}, {"user_id": user.id})`. Values are exact (None: missing or null) or
    operator expressions (`{"views": {"gte": 10}}`, see `service.core.declarations.scopes`); with no alternative
    nothing is in scope."""
    return AnyOf(tuple(dict(a) for a in alternatives))


Scope = bool | dict[str, Any] | AnyOf


class Policy:
    """Base policy: every method denies until the application says otherwise."""

    @staticmethod
    def can(user: Model | None, ability: str) -> bool:
        """Whether the token `user` came with may do what `ability` names (`"posts:publish-posts"`), as
        `Context.can` says it; True without a token. E.g. `return self.can(user, "posts:write") and ...`."""
        return user_can(user, ability)

    def allow_restify(self, user: Model | None) -> bool:
        return False

    def scope(self, user: Model | None) -> Scope:
        """Which records `user` may read at all, applied inside every query that reads them:
        True (all, then filtered by `show`), False (none), field values ({"user_id": user.id}, or
        operator expressions such as {"views": {"gte": 10}}), or `any_of({...}, {...})` of such dicts
        ("published or mine")."""
        return True

    def show(self, user: Model | None, record: Model) -> bool:
        return False

    def store(self, user: Model | None) -> bool:
        return False

    def update(self, user: Model | None, record: Model) -> bool:
        return False

    def delete(self, user: Model | None, record: Model) -> bool:
        return False


class _DenyAll(Policy):
    pass


def read_scope(policy: str, scope: Any) -> tuple[dict[str, Any], ...] | None:
    """What `scope()` answered, compiled: None reads everything, () nothing."""
    if isinstance(scope, bool):
        return None if scope else ()
    if isinstance(scope, AnyOf):
        alternatives: tuple[Any, ...] = scope.alternatives
    elif isinstance(scope, Mapping):
        alternatives = (scope,)
    else:
        raise DeclarationError(f"{policy}.scope() must return True, False, a dict or any_of(...), "
                               f"not {type(scope).__name__}")
    return compile_alternatives(policy, alternatives)


def check_scope(policy: Policy) -> None:
    """At start-up: a scope that answers a guest with a malformed rule is a DeclarationError. A scope
    that needs a user (and raises without one) is checked at its first use instead."""
    try:
        scope = policy.scope(None)
    except Exception:
        return
    read_scope(type(policy).__name__, scope)


class PolicyMap:
    def __init__(self, policies: dict[type[Model], type[Policy] | Policy] | None = None) -> None:
        self._by_name: dict[str, Policy] = {}
        self._warned: set[str] = set()
        for model_class, policy in (policies or {}).items():
            self._by_name[model_class.__name__] = policy() if isinstance(policy, type) else policy

    def registered(self, model_class: type[Model]) -> Policy | None:
        """The model's own policy, if any, without the warning `for_model` logs (start-up reads)."""
        return self._by_name.get(model_class.__name__)

    def for_model(self, model_class: type[Model]) -> Policy:
        policy = self.registered(model_class)
        if policy is None:
            self.warn_unguarded(model_class)
            return _DenyAll()
        return policy

    def warn_unguarded(self, model_class: type[Model], policies_file: str = "repositories/policies.py") -> None:
        """Logs, once per model, that a model without a policy is denied everything, and the fix. The
        registry says it at start; a map built otherwise says it at the model's first use."""
        name = model_class.__name__
        if name in self._warned:
            return
        self._warned.add(name)
        log.warning("no policy registered for model %s: every operation on it is denied; add a policy class "
                    "for it in %s and list it in POLICIES ({%s: %sPolicy})", name, policies_file, name, name)

    def gate(self, model_class: type[Model], user: Model | None) -> "Gate":
        return Gate(self.for_model(model_class), user)

    def allows(self, model_class: type[Model], action: str, user: Model | None, record: Model | None = None) -> bool:
        """`allow_restify` and then the action's own method; any exception in a policy denies."""
        return self.gate(model_class, user).allows(action, record)

    def scope(self, model_class: type[Model], user: Model | None) -> tuple[dict[str, Any], ...] | None:
        """The read rule as compiled alternatives (`service.core.declarations.scopes`): None reads everything, ()
        nothing. A scope that raises, or is malformed (an unknown operator, a wrong shape: a
        DeclarationError naming the policy, also raised at start-up by `check_scope`), reads nothing
        (fails closed, loudly)."""
        policy = self.for_model(model_class)
        try:
            return read_scope(type(policy).__name__, policy.scope(user))
        except Exception:
            log.exception("policy %s.scope failed; reading nothing", type(policy).__name__)
            return ()

    def flags(self, model_class: type[Model], user: Model | None, record: Model) -> dict[str, bool]:
        return self.gate(model_class, user).flags(record)


FLAGS = ("authorizedToShow", "authorizedToStore", "authorizedToUpdate", "authorizedToDelete")


class Gate:
    """One user's rights on one model, for one request: `allow_restify` and `store` do not
    depend on the record, so they are asked once however many rows a page has."""

    def __init__(self, policy: Policy, user: Model | None) -> None:
        self.policy = policy
        self.user = user
        self.entered = self._ask("allow_restify", lambda: policy.allow_restify(user))
        self._store: bool | None = None
        self._methods: dict[str, Any] = {}
        self._shown: Callable[[Model], bool] | None = None

    def _method(self, action: str) -> Any:
        # Looked up once per request and action, not once per row.
        method = self._methods.get(action)
        if method is None:
            method = self._methods[action] = getattr(self.policy, action)
        return method

    def _ask(self, action: str, question: Any) -> bool:
        try:
            return bool(question())
        except Exception:  # a broken policy must fail closed, and loudly
            return self._refused(action)

    def allows(self, action: str, record: Model | None = None) -> bool:
        if not self.entered:
            return False
        if action == "store":
            if self._store is None:
                self._store = self._ask("store", lambda: self.policy.store(self.user))
            return self._store
        try:
            return bool(self._method(action)(self.user, record))
        except Exception:  # a broken policy must fail closed, and loudly
            return self._refused(action)

    def allows_or(self, action: str, fallback: str, record: Model | None, *more: Any) -> bool:
        """The policy's own question where it defines it — `attach_tags(user, record, tag)`,
        `update_bulk(user, record)`, `store_bulk(user)`, `run_action(user, record, action)` — else
        `fallback(user, record)` (`update`, `store`...)."""
        if not self.entered:
            return False
        if not callable(getattr(self.policy, action, None)):
            return self.allows(fallback, record)
        arguments = (self.user,) if record is None and not more else (self.user, record, *more)
        return self._ask(action, lambda: self._method(action)(*arguments))

    def shows(self, record: Model) -> bool:
        """`show` for a record the scope let through; a refusal is reported once per policy,
        as the totals and limits that count in-scope records then count records nobody sees."""
        return (self._shown or self.shown_test())(record)

    def shown_test(self) -> Callable[[Model], bool]:
        """`shows`, for the records of one page: the policy's method looked up once (per gate)."""
        if self._shown is not None:
            return self._shown
        if not self.entered:
            self._shown = lambda record: False
            return self._shown
        show, user = getattr(self.policy, "show", None), self.user

        def test(record: Model) -> bool:
            try:
                shown = show(user, record)  # type: ignore[misc]
            except Exception:  # a broken policy must fail closed, and loudly
                shown = self._refused("show")
            return True if shown else self._refused_shown()
        self._shown = test
        return test

    def _refused_shown(self) -> bool:
        name = f"{type(self.policy).__module__}.{type(self.policy).__qualname__}"
        if name not in _warned_show:
            _warned_show.add(name)
            log.warning("policy %s: show() refused records that its scope() let through; index totals "
                        "count them. Express the rule in scope() (exact values or any_of) to keep them exact.",
                        type(self.policy).__name__)
        return False

    def shown_flags(self) -> Callable[[Model], dict[str, bool]]:
        """`flags` of the records of one page, which `show` let through: `store` and the methods are
        looked up once for the page, `update` and `delete` asked per record (and fail closed alike)."""
        if not self.entered:
            return lambda record: dict.fromkeys(FLAGS, False)
        stored, user = self.allows("store"), self.user
        update, delete = getattr(self.policy, "update", None), getattr(self.policy, "delete", None)

        def flags(record: Model) -> dict[str, bool]:
            try:
                updates = bool(update(user, record))  # type: ignore[misc]
            except Exception:  # a broken policy must fail closed, and loudly
                updates = self._refused("update")
            try:
                deletes = bool(delete(user, record))  # type: ignore[misc]
            except Exception:
                deletes = self._refused("delete")
            return {"authorizedToShow": True, "authorizedToStore": stored, "authorizedToUpdate": updates,
                    "authorizedToDelete": deletes}
        return flags

    def _refused(self, action: str) -> bool:
        log.exception("policy %s.%s raised; denying", type(self.policy).__name__, action)
        return False

    def flags(self, record: Model, shown: bool | None = None) -> dict[str, bool]:
        """The four authorization flags; `shown` when the caller already asked `show`."""
        found = self.shown_flags()(record)
        found["authorizedToShow"] = self.allows("show", record) if shown is None else shown
        return found
