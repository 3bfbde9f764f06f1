"""Live changes: feeds, subscriptions, their audience, tickets.

May import: every other layer (docs/architecture.md: the layers and their rules).
"""
