"""What an application's seeder writes through: the operations layer, as a user would.

An application may have `repositories/seeders.py` with `async def seed(seeder)`; `restify seed`
calls it with a `Seeder`. Every write is an ordinary operation (validation, server-set values,
timestamps, hooks and policies apply, as the acting user), so a seeder can only write the
repositories the application declares, in the shape they declare.
"""
import random
from typing import Any

from service.core.declarations import Context, Model, Restify
from service.core.operations import attaching, auth, crud as operations


class Seeder:
    def __init__(self, app: Restify, scale: float = 1.0, seed_value: int = 7) -> None:
        self.app = app
        self.scale = scale
        self.random = random.Random(seed_value)  # the same data on every run

    def amount(self, default: int) -> int:
        """`default` scaled by `restify seed --scale` (at least 1)."""
        return max(1, round(default * self.scale))

    def context(self, user: Model | None = None) -> Context:
        return Context(user=user, door="console")

    async def user(self, values: dict[str, Any]) -> Model:
        """Registers a user (the user repository's rules apply: a password needs its confirmation);
        the user, to act as in `store`."""
        context = self.context()
        await auth.create_user(self.app, values, context)
        assert context.user is not None
        return context.user

    async def store(self, resource: str, values: dict[str, Any], user: Model | None = None) -> dict[str, Any]:
        """Stores a record as `user` would through the API; the stored resource (`id`, `attributes`)."""
        return (await operations.store(self.app, resource, values, self.context(user)))["data"]

    async def attach(self, resource: str, id: str, relation: str, ids: list[str],
                     user: Model | None = None) -> dict[str, Any]:
        """Attaches `ids` to record `id`'s BelongsToMany `relation` as `user` would (POST .../attach/<relation>);
        the record as the answer shows it, with the relation."""
        return (await attaching.change(self.app, resource, id, "attach", relation, {relation: ids},
                                       self.context(user)))["data"]
