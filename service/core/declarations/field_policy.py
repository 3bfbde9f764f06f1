"""A field's rules by policy: who sees it, who may store and update it, and where it is left out.
Read per request by `service.core.declarations.exposure`."""
from collections.abc import Callable
from typing import Any, Self

from service.core.kernel import DeclarationError

DOORS = ("rest", "graphql", "mcp")


class ByPolicy:
    """The `Field` builder's methods of its rules by policy; the state is set by `Field.__init__`."""
    name: str
    declared_at: tuple[str, int] | None
    see_rule: Callable[[Any, Any], Any] | None
    store_rule: Callable[[Any, Any], Any] | None
    update_rule: Callable[[Any, Any], Any] | None
    hidden_actions: frozenset[str]
    hidden_doors: frozenset[str]

    def can_see(self, rule: Callable[[Any, Any], Any]) -> Self:
        """Shown in a record's answer only when `rule(user, record)` is true. `record` is None when
        the question is about the field itself (filters, sorts, search, fieldsets): a user for whom
        that is false may not name the field at all."""
        self.see_rule = rule
        return self

    def can_store(self, rule: Callable[[Any, Any], Any]) -> Self:
        """A body may set it on store only when `rule(user, None)` is true; else 403 naming it."""
        self.store_rule = rule
        return self

    def can_update(self, rule: Callable[[Any, Any], Any]) -> Self:
        """A body may set it on update only when `rule(user, record)` is true; else 403 naming it."""
        self.update_rule = rule
        return self

    def hide_on_index(self) -> Self:
        """Left out of lists (index, and the relations loaded with them)."""
        self.hidden_actions |= {"index"}
        return self

    def hide_on_show(self) -> Self:
        """Left out of single records (show, and the answers of store and update)."""
        self.hidden_actions |= {"show"}
        return self

    def hide_from(self, *doors: str) -> Self:
        """Left out of the answers and descriptions of these doors: "rest", "graphql", "mcp"."""
        unknown = [door for door in doors if door not in DOORS]
        if unknown:
            error = DeclarationError(f"field {self.name!r}: hide_from({unknown[0]!r}) names no door; "
                                     f"use {', '.join(map(repr, DOORS))}")
            error.location = self.declared_at
            raise error
        self.hidden_doors |= set(doors)
        return self

    @property
    def by_policy(self) -> bool:
        """Whether who reads the field decides if it is shown (`can_see`, `hide_on_*`, `hide_from`)."""
        return self.see_rule is not None or bool(self.hidden_actions or self.hidden_doors)

