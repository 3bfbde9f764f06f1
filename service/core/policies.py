"""Policies: which user may do what with which record.

A model without a registered policy is denied everything (secure default),
and that is logged once, naming the model, so the cause is easy to find.
"""
import logging
from typing import Any

from service.core.models import Model

log = logging.getLogger("restify.policies")


class Policy:
    """Base policy: every method denies until the application says otherwise."""

    def allow_restify(self, user: Model | None) -> bool:
        return False

    def scope(self, user: Model | None) -> bool | dict[str, Any]:
        """Which rows an index may list for `user`, applied in the query so counts stay exact:
        True (all, then filtered by `show`), False (none), or exact field values ({"user_id": user.id})."""
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


class PolicyMap:
    def __init__(self, policies: dict[type[Model], type[Policy] | Policy] | None = None) -> None:
        self._by_name: dict[str, Policy] = {}
        self._warned: set[str] = set()
        for model_class, policy in (policies or {}).items():
            self._by_name[model_class.__name__] = policy() if isinstance(policy, type) else policy

    def for_model(self, model_class: type[Model]) -> Policy:
        policy = self._by_name.get(model_class.__name__)
        if policy is None:
            if model_class.__name__ not in self._warned:
                self._warned.add(model_class.__name__)
                log.warning("no policy registered for model %s: every operation on it is denied",
                            model_class.__name__)
            return _DenyAll()
        return policy

    def gate(self, model_class: type[Model], user: Model | None) -> "Gate":
        return Gate(self.for_model(model_class), user)

    def allows(self, model_class: type[Model], action: str, user: Model | None, record: Model | None = None) -> bool:
        """`allow_restify` and then the action's own method; any exception in a policy denies."""
        return self.gate(model_class, user).allows(action, record)

    def scope(self, model_class: type[Model], user: Model | None) -> bool | dict[str, Any]:
        policy = self.for_model(model_class)
        try:
            scope = policy.scope(user)
        except Exception:
            log.exception("policy %s.scope raised; listing nothing", type(policy).__name__)
            return False
        return scope if isinstance(scope, dict) else bool(scope)

    def flags(self, model_class: type[Model], user: Model | None, record: Model) -> dict[str, bool]:
        return self.gate(model_class, user).flags(record)


class Gate:
    """One user's rights on one model, for one request: `allow_restify` and `store` do not
    depend on the record, so they are asked once however many rows a page has."""

    def __init__(self, policy: Policy, user: Model | None) -> None:
        self.policy = policy
        self.user = user
        self.entered = self._ask("allow_restify", lambda: policy.allow_restify(user))
        self._store: bool | None = None
        self._methods: dict[str, Any] = {}

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
            log.exception("policy %s.%s raised; denying", type(self.policy).__name__, action)
            return False

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
            log.exception("policy %s.%s raised; denying", type(self.policy).__name__, action)
            return False

    def flags(self, record: Model, shown: bool | None = None) -> dict[str, bool]:
        """The four authorization flags; `shown` when the caller already asked `show`."""
        return {
            "authorizedToShow": self.allows("show", record) if shown is None else shown,
            "authorizedToStore": self.allows("store"),
            "authorizedToUpdate": self.allows("update", record),
            "authorizedToDelete": self.allows("delete", record),
        }
