"""Who is asking: tokens and throttles.

May import: kernel, declarations, reading (docs/architecture.md: the layers and their rules).
"""
from service.core.identity.ratelimit import judge_password, login_attempt, password_matches, registration_attempt
from service.core.identity.tokens import (TOKENS, abilities_of, after_user_delete, after_user_update, create_token,
                                          described, digest, issue_token, mark_used, revoke_token, revoke_tokens,
                                          tokens_of)

__all__ = [
    "TOKENS", "abilities_of", "after_user_delete", "after_user_update", "create_token", "described", "digest",
    "issue_token", "judge_password", "login_attempt", "mark_used", "password_matches", "registration_attempt",
    "revoke_token", "revoke_tokens", "tokens_of"
]
