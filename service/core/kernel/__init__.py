"""What every layer of core may use: errors and their statuses, names, the operator table,
matching a record against conditions, password hashing, health.

May import: nothing of core (docs/architecture.md: the layers and their rules).
"""
from service.core.kernel.errors import (BadRequest, Busy, DeclarationError, EmailNotVerified, Forbidden, OAuthError,
                                        LiveUnavailable, MissingAbility, NotAnApplication, NotFound,
                                        PreconditionFailed, ResponseTooLarge, ServiceUnavailable, TooManyRequests,
                                        Unauthenticated, ValidationFailed)
from service.core.kernel.matching import (ANY, COMPOUNDS, NOT, Condition, Through, leaves, relation_conditions,
                                          satisfies, with_values)
from service.core.kernel.naming import RESERVED, attribute_label, collection_name, snake
from service.core.kernel.operators import (BY_OBJECT_NAME, CONDITIONS, EXACT, FLAG, LIST, NAME, NEGATED, OPERATORS,
                                           Arity, Operator, choices, for_type, query_text, refuse, refuse_field,
                                           refuse_null, refuse_operator, refuse_shape)
from service.core.kernel.machine import cores
from service.core.kernel.passwords import Passwords

__all__ = [
    "ANY", "COMPOUNDS", "NOT", "Through", "leaves", "relation_conditions", "with_values",
    "Arity", "BY_OBJECT_NAME", "BadRequest", "Busy", "CONDITIONS", "Condition", "DeclarationError", "EXACT", "FLAG",
    "EmailNotVerified", "Forbidden", "LIST", "LiveUnavailable", "MissingAbility", "NAME", "NEGATED", "NotAnApplication",
    "NotFound", "OAuthError", "OPERATORS", "Operator", "Passwords", "PreconditionFailed", "RESERVED",
    "ResponseTooLarge", "ServiceUnavailable",
    "TooManyRequests", "Unauthenticated", "ValidationFailed", "attribute_label", "choices", "collection_name", "cores",
    "for_type", "query_text", "refuse", "refuse_field", "refuse_null", "refuse_operator", "refuse_shape", "satisfies",
    "snake"
]
