"""The JSON Schemas and parameters the doors publish.

May import: kernel, declarations, reading, identity, writing.
"""
