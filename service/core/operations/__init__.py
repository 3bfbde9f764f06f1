"""What the doors call: CRUD, bulk writes and their all-or-nothing, attach, actions, getters,
accounts, seeding, confirmations.

May import: every layer but live (docs/architecture.md: the layers and their rules).
"""
from service.core.operations.auth import TOKENS, token_user
from service.core.operations.crud import enter, now

__all__ = ["TOKENS", "enter", "now", "token_user"]
