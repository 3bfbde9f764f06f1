"""Who is asking: tokens and throttles.

May import: kernel, declarations, reading (docs/architecture.md: the layers and their rules).
"""
from service.core.identity.grants import (CODES, create_grant, grant_by_refresh, issue_code, rotate_refresh,
                                          take_code)
from service.core.identity.known import Known, follow, identities
from service.core.identity.pacing import pace_writes
from service.core.identity.ratelimit import (client_registration_attempt, judge_password, login_attempt,
                                             password_matches, registration_attempt, resend_attempt, reset_attempt)
from service.core.identity.resets import create_reset_token, use_reset_token
from service.core.identity.tokens import (GRANT, TOKENS, abilities_of, after_user_delete, after_user_update,
                                          create_token, described, digest, issue_token, mark_used, revoke_grant,
                                          revoke_token, revoke_tokens, tokens_of)
from service.core.identity.verification import (VERIFIED, after_address_change, email_hash, is_verified, link_state,
                                                refuse_unverified, send_verification, unverified_on_change,
                                                verifies_email)

__all__ = [
    "TOKENS", "abilities_of", "after_user_delete", "after_user_update", "create_token", "described", "digest",
    "issue_token", "judge_password", "login_attempt", "mark_used", "password_matches", "registration_attempt",
    "revoke_token", "revoke_tokens", "tokens_of",
    # each user's writes, paced
    "pace_writes",
    # who a token is, remembered per process
    "Known", "follow", "identities",
    # accounts: password resets and email verification
    "VERIFIED", "after_address_change", "create_reset_token", "email_hash", "is_verified", "link_state",
    "refuse_unverified", "resend_attempt", "reset_attempt", "send_verification", "unverified_on_change",
    "use_reset_token", "verifies_email",
    # OAuth grants and codes
    "CODES", "GRANT", "client_registration_attempt", "create_grant", "grant_by_refresh", "issue_code", "revoke_grant",
    "rotate_refresh", "take_code",
]
