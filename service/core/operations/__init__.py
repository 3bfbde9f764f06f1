"""What the doors call: CRUD, bulk writes and their all-or-nothing, attach, actions, getters,
accounts, seeding, confirmations.

May import: every layer but live.
"""
