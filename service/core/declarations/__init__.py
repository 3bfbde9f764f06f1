"""What an application declares: fields and their description and constraints, rules, models,
repositories and relations, policies and scopes, the registry, the index plan, the context of
a request and its byte budget, and the application object.

May import: kernel.
"""
