"""What every layer of core may use: errors and their statuses, names, the operator table,
matching a record against conditions, password hashing, health.

May import: nothing of core.
"""
