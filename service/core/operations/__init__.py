"""What the doors call: CRUD, bulk writes and their all-or-nothing, attach, actions, getters,
accounts, seeding, confirmations.

May import: every layer but live (docs/architecture.md: the layers and their rules).
"""
from service.core.operations.auth import TOKENS, token_user
from service.core.operations.crud import enter, now
from service.core.operations.users import find_by_email, user_repository

__all__ = ["TOKENS", "enter", "find_by_email", "now", "token_user", "user_repository"]
