"""Storage's refusals as the domain errors every front door maps (`from_storage`)."""
from service.core.errors import (
    BadRequest, NotFound, ServiceUnavailable, TooManyRequests, ValidationFailed, answer, from_storage, is_unavailable,
)
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


# -- answer: the one mapping every door wraps -----------------------------------------------------

def test_a_validation_error_answers_422_with_its_field_errors_in_body_and_extensions():
    mapped = answer(ValidationFailed({"title": ["The title field is required."]}))
    assert (mapped.status, mapped.code, mapped.fault) == (422, "VALIDATION_FAILED", False)
    assert mapped.body == {"message": "The given data was invalid.",
                           "errors": {"title": ["The title field is required."]}}
    assert mapped.extensions() == {"code": "VALIDATION_FAILED", "errors": {"title": ["The title field is required."]}}


def test_too_many_requests_says_when_to_come_back():
    mapped = answer(TooManyRequests(retry_after=7))
    assert (mapped.status, mapped.headers) == (429, {"Retry-After": "7"})
    assert mapped.body == {"message": "Too many attempts. Try again in 7 seconds."}
    assert mapped.extensions() == {"code": "TOO_MANY_REQUESTS"}


def test_storage_refusals_answer_as_their_domain_errors():
    assert (answer(Unavailable("timed out")).status, answer(Unavailable("x")).code) == (503, "SERVICE_UNAVAILABLE")
    assert answer(Unstorable("a huge integer")).body == {
        "message": "The request holds a huge integer, which cannot be stored."}
    assert is_unavailable(Unavailable("x")) and not is_unavailable(NotFound())


def test_anything_else_is_a_fault_answered_without_its_own_words():
    mapped = answer(KeyError("secret internals"))
    assert (mapped.status, mapped.code, mapped.fault, mapped.body) == (
        500, "INTERNAL", True, {"message": "Server error."})
    assert not answer(NotFound()).fault and not answer(Unavailable("x")).fault
