"""The one reading of a boolean, as every door's test pins it: a JSON or form body
(tests/core/test_rules.py, tests/http/test_booleans.py), a query string (tests/http/test_booleans.py),
an MCP filter object (tests/mcp/test_index_query.py) and a GraphQL filter input that takes text
(tests/graphql/test_filters.py). GraphQL's own Boolean is typed, so only true and false reach it there."""

# What a query string carries, and what it reads as.
TEXTS = [("true", True), ("false", False), ("1", True), ("0", False), ("TRUE", True), ("False", False)]
# Typed values (JSON, GraphQL, MCP arguments): the texts above and these.
TYPED = [*TEXTS, (True, True), (False, False), (1, True), (0, False)]
# Refused on every door, with the door's "must be true or false" error.
REFUSED_TEXTS = ["yes", "no", "on", "off", "maybe", "2", "1.0", "t"]
REFUSED = [*REFUSED_TEXTS, 2, -1, 1.0, 0.0, [True], {"eq": True}]
