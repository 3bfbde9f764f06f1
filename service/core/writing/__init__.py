"""Validation, uploads and the one write path.

May import: kernel, declarations, reading, identity.
"""
