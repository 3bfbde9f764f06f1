"""Storage's refusals as the domain errors every front door maps (`from_storage`)."""
from service.core.kernel.answers import TABLE, answer, from_storage, is_unavailable
from service.core.kernel.errors import (
    API, LIVE, MCP, OAUTH, OPS, BadRequest, EndpointUnavailable, LiveUnavailable, NotFound, NotReady, RestifyError,
    ServiceUnavailable, TooManyRequests, ValidationFailed,
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


# -- the table: every error with a status ---------------------------------------------------------

def _every_error_class() -> set[type]:
    import importlib
    import pkgutil

    import service
    for module in pkgutil.walk_packages(service.__path__, "service."):
        if ".console.app_template" not in module.name:
            importlib.import_module(module.name)
    found, pending = set(), [RestifyError]
    while pending:
        for subclass in pending.pop().__subclasses__():
            found.add(subclass)
            pending.append(subclass)
    return found


def test_every_error_with_a_status_is_in_the_table_once():
    assert len(TABLE) == len(set(TABLE))
    assert _every_error_class() == set(TABLE)
    assert all(error.__module__ == "service.core.kernel.errors" for error in TABLE)
    assert all(error.where in (API, LIVE, MCP, OPS, OAUTH) and error.when for error in TABLE)


def test_the_live_the_mcp_and_the_readiness_refusals_are_table_entries():
    assert (LiveUnavailable.status, LiveUnavailable.where) == (501, LIVE) and EndpointUnavailable.where == MCP
    assert (answer(EndpointUnavailable()).status, answer(EndpointUnavailable()).body) == (
        503, {"message": "The MCP endpoint is not available."})
    assert (answer(NotReady()).status, answer(NotReady()).body, NotReady.where) == (
        503, {"message": "The database does not answer."}, OPS)


def test_no_door_writes_an_error_status_by_hand():
    import re
    from pathlib import Path
    doors = Path(__file__).resolve().parents[2] / "service"
    by_hand = re.compile(r"status\s*=\s*[45]\d\d\b|set_status\(\s*[45]\d\d|status, code(, default_message)? = [45]")
    found = {str(path.relative_to(doors.parent)) for path in doors.rglob("*.py") if by_hand.search(path.read_text())}
    assert found == {"service/core/kernel/errors.py"}
