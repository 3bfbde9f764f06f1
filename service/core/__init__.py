"""The framework core: declarations, reading, identity, writing, describing, operations and live
changes, as eight layer packages, each importing only those below it.

docs/architecture.md is the map: which package holds what, the import rules (checked by
tests/test_layers.py), and where each rule is written.
"""
