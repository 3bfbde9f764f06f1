"""Restify for Python: what repository authors import.

    from service import Model, belongs_to, has_many, belongs_to_many
    from service import Repository, field, model, BelongsTo, HasMany, BelongsToMany, Policy, any_of
    from service import Action, Getter   # what a repository offers beyond its five operations
    from service import Webhook  # a repository's changes POSTed elsewhere (`webhooks = [...]`)
    from service import Seeder   # the argument of `async def seed(seeder)` in repositories/seeders.py
"""
from service.core.declarations.context import Context, current_user_id
from service.core.declarations.fields import Field, field
from service.core.declarations.models import Model, belongs_to, belongs_to_many, has_many
from service.core.declarations.policies import Policy, any_of
from service.core.declarations.relations import BelongsTo, BelongsToMany, HasMany
from service.core.declarations.repository import Repository, model
from service.core.declarations.webhooks import Webhook
from service.core.kernel.errors import (
    BadRequest, DeclarationError, Forbidden, NotFound, RestifyError, Unauthenticated, ValidationFailed,
)
from service.core.operations.actions import Action
from service.core.operations.getters import Getter
from service.core.operations.seeding import Seeder

__all__ = [
    "Action",
    "BadRequest",
    "BelongsTo",
    "BelongsToMany",
    "Context",
    "DeclarationError",
    "Field",
    "Forbidden",
    "Getter",
    "HasMany",
    "Model",
    "NotFound",
    "Policy",
    "Repository",
    "RestifyError",
    "Seeder",
    "Unauthenticated",
    "ValidationFailed",
    "Webhook",
    "any_of",
    "belongs_to",
    "belongs_to_many",
    "current_user_id",
    "field",
    "has_many",
    "model",
]
