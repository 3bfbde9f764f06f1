"""Reading records as a user may see them: visibility, query parsing, filters, cursors,
relation loading, fieldsets, serializing, and the admission of expensive queries.

May import: kernel, declarations.
"""
