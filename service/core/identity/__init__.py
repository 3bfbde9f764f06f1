"""Who is asking: tokens and throttles.

May import: kernel, declarations, reading (docs/architecture.md: the layers and their rules).
"""
from service.core.identity.ratelimit import judge_password, login_attempt, password_matches, registration_attempt
from service.core.identity.tokens import (TOKENS, after_user_delete, after_user_update, create_token, digest,
                                          revoke_tokens)

__all__ = [
    "TOKENS", "after_user_delete", "after_user_update", "create_token", "digest", "judge_password", "login_attempt",
    "password_matches", "registration_attempt", "revoke_tokens"
]
