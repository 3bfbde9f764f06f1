"""Live changes: feeds, subscriptions, their audience, tickets.

May import: every other layer.
"""
