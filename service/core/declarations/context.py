"""The transport-neutral context every operation takes.

REST handlers, GraphQL resolvers, MCP tools and console commands each build
one; nothing below them ever sees a Tornado request. Repository `fields(request)`
receives it as its `request`.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.core.declarations.abilities import grants, user_can
from service.core.declarations.budget import Budget
from service.core.declarations.models import Model
from service.core.kernel import MissingAbility


@dataclass
class Context:
    user: Model | None = None
    door: str = "console"                   # "rest" | "graphql" | "mcp" | "console"
    params: Mapping[str, str] = field(default_factory=dict)
    action: str = ""                        # "index" | "show" | "store" | "update" | "patch" | "delete" | "profile"
    base_url: str = ""                      # scheme://host, for pagination links and Location
    extras: dict[str, Any] = field(default_factory=dict)
    budget: Budget | None = None            # the bytes the answer may take (service.core.declarations.budget)
    granted: frozenset[str] = frozenset()   # abilities an operation lends beyond the token's (an action's writes)
    # Whether the answer's records carry their authorization flags (`meta.authorizedTo...`): a door whose
    # answers have no place for them (GraphQL's types) spares the policy calls that make them.
    shows_flags: bool = True
    # Whether an index answer carries its page's meta and links: a door that writes only the records (a
    # GraphQL list) spares the cursors and links, which are sealed and encoded for nothing otherwise.
    shows_page_meta: bool = True
    # Whether an index writes each record on one level, `{"id", "version", <attributes>}` (what a GraphQL
    # row reads), instead of a resource object to be flattened again. The index clears it when the list
    # loads relations (asked or eager): afterwards it says which it wrote.
    flat_records: bool = False
    # The fields each repository showed this context, kept by what they depend on (`Resource.fields`):
    # an operation asks for them several times (parsing, checking, presenting), a live subscription on
    # every change it is sent. None: worked out on every call.
    seen_fields: dict[tuple[Any, ...], Any] | None = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_storing(self) -> bool:
        return self.action == "store"

    @property
    def is_updating(self) -> bool:
        return self.action in ("update", "patch")

    @property
    def abilities(self) -> tuple[str, ...] | None:
        """The abilities of the bearer token the user came with; None without a token (the console,
        a guest), which no ability limits."""
        held = self.user._abilities if self.user is not None else None
        return tuple(held) if held is not None else None

    def can(self, ability: str) -> bool:
        """Whether the token may do what `ability` names (`"posts:read"`, `"posts:publish-posts"`);
        policies ask it too. Abilities only narrow a token: the policy still decides."""
        return user_can(self.user, ability) or grants(self.granted, ability)

    def require(self, ability: str) -> None:
        """MissingAbility (403, naming it) unless the token may do what `ability` names."""
        if not self.can(ability):
            raise MissingAbility(ability)


def current_user_id(context: Context) -> str | None:
    """For `field("user_id").value(current_user_id)`: the id of the acting user."""
    return context.user.id if context.user is not None else None
