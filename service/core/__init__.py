"""The framework core: declarations, validation, policies and the operations layer."""
