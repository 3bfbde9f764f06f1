"""A sealed cursor gives back exactly the position it was made for, whatever the sort values hold."""
import math
from datetime import datetime, timezone

import pytest

from service.core.kernel import BadRequest
from service.core.reading.cursors import Position, cursor_binding, decode, encode

SECRET = b"a secret of the deployment"


@pytest.mark.parametrize("values", [
    ("6b094e67cf5ec53c2738d7a9",),
    ("José", "6b094e67cf5ec53c2738d7a9"),                     # text beyond ASCII
    (datetime(2026, 11, 27, 9, 30, tzinfo=timezone.utc), "x"),  # a date
    (2**63 - 1, -(2**63), 1.5, True, None, "x"),
    (2**70, "x"),                                               # past 64 bits
])
def test_a_position_comes_back_as_it_was_sealed(values):
    bound = cursor_binding("posts", [("views", -1), ("id", 1)], 15)
    for forward in (True, False):
        token = encode(SECRET, bound, Position(forward, values))
        assert decode(SECRET, bound, token, len(values)) == Position(forward, values)
        assert encode(SECRET, bound, Position(forward, values)) == token  # one position, one cursor


def test_nan_and_infinities_come_back_as_themselves_not_as_null():
    bound = cursor_binding("posts", [("score", 1), ("id", 1)], 15)
    token = encode(SECRET, bound, Position(True, (math.inf, "x")))
    assert decode(SECRET, bound, token, 2) == Position(True, (math.inf, "x"))
    found = decode(SECRET, bound, encode(SECRET, bound, Position(True, (math.nan, "x"))), 2).values
    assert math.isnan(found[0]) and found[1] == "x"


def test_a_cursor_of_another_binding_is_refused():
    token = encode(SECRET, cursor_binding("posts", 15), Position(True, ("x",)))
    with pytest.raises(BadRequest, match="belongs to another query"):
        decode(SECRET, cursor_binding("posts", 16), token, 1)
