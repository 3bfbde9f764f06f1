"""The transport-neutral context every operation takes.

REST handlers, GraphQL resolvers, MCP tools and console commands each build
one; nothing below them ever sees a Tornado request. Repository `fields(request)`
receives it as its `request`.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.core.declarations.budget import Budget
from service.core.declarations.models import Model


@dataclass
class Context:
    user: Model | None = None
    door: str = "console"                   # "rest" | "graphql" | "mcp" | "console"
    params: Mapping[str, str] = field(default_factory=dict)
    action: str = ""                        # "index" | "show" | "store" | "update" | "patch" | "delete" | "profile"
    base_url: str = ""                      # scheme://host, for pagination links and Location
    extras: dict[str, Any] = field(default_factory=dict)
    budget: Budget | None = None            # the bytes the answer may take (service.core.declarations.budget)

    @property
    def is_storing(self) -> bool:
        return self.action == "store"

    @property
    def is_updating(self) -> bool:
        return self.action in ("update", "patch")


def current_user_id(context: Context) -> str | None:
    """For `field("user_id").value(current_user_id)`: the id of the acting user."""
    return context.user.id if context.user is not None else None
