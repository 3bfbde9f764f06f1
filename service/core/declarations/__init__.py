"""What an application declares: fields and their description and constraints, rules, models,
repositories and relations, policies and scopes, the registry, the index plan, the context of
a request and its byte budget, and the application object.

May import: kernel (docs/architecture.md: the layers and their rules).
"""
from service.core.declarations.abilities import EVERYTHING, READ, WRITE, ability, grants
from service.core.declarations.app import PerApplication, Restify
from service.core.declarations.budget import (DATA_MEMBER, RELATIONSHIPS_MEMBER, Budget, Room, budget_of, encoded_size,
                                              held_budget, own_size, relation_size)
from service.core.declarations.constraints import PATTERN_RULES, Constraints
from service.core.declarations.context import Context
from service.core.declarations.description import INT64, Description, describe, iso, to_boolean, to_number
from service.core.declarations.exposure import DESCRIBING, askable, refused_field
from service.core.declarations.fields import DELETED_AT, TIMESTAMPS, Field, field, sort_keys
from service.core.declarations.models import Model
from service.core.declarations.policies import Gate
from service.core.declarations.registry import Resource, ResourceRelation
from service.core.declarations.rules import MESSAGES, FieldRules, email_key
from service.core.declarations.scopes import admits
from service.core.declarations.webhooks import Webhook

__all__ = [
    "Budget", "Constraints", "Context", "DATA_MEMBER", "DELETED_AT", "DESCRIBING", "Description", "EVERYTHING",
    "Field", "FieldRules", "Gate", "INT64", "MESSAGES", "Model", "PATTERN_RULES", "READ", "RELATIONSHIPS_MEMBER",
    "PerApplication", "Resource", "ResourceRelation", "Restify", "Room", "TIMESTAMPS", "WRITE", "Webhook", "ability",
    "admits", "askable",
    "budget_of", "describe", "email_key", "encoded_size", "field", "grants", "held_budget", "own_size",
    "refused_field", "relation_size", "sort_keys", "iso", "to_boolean", "to_number"
]
