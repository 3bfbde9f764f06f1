"""Storage's refusals as the domain errors every front door maps (`from_storage`)."""
from service.core.errors import BadRequest, NotFound, ServiceUnavailable, from_storage
from storage import Unavailable, Unstorable


def test_an_unreachable_database_is_a_503():
    error = from_storage(Unavailable("timed out"))
    assert isinstance(error, ServiceUnavailable)
    assert (error.status, error.body()) == (503, {"message": "The database is unavailable."})


def test_a_value_storage_cannot_carry_is_a_400_naming_what_it_was():
    error = from_storage(Unstorable("a string that is not valid text"))
    assert isinstance(error, BadRequest)
    assert (error.status, error.code) == (400, "BAD_REQUEST")
    assert error.body() == {"message": "The request holds a string that is not valid text, which cannot be stored."}


def test_other_errors_pass_through():
    error = NotFound()
    assert from_storage(error) is error
    assert isinstance(from_storage(ValueError("x")), ValueError)
