"""Fuzzing the running service with schemathesis, from its own OpenAPI document.

Every operation of the document gets generated requests (valid and invalid ones, plus
schemathesis' coverage cases: boundaries, wrong types, undeclared methods and media types),
sent to a real `restify serve` process as a logged-in user. Every response must be no 5xx,
a documented status, the documented content type and headers, and a body that fits the
documented schema. Generated record ids rarely exist, so about half of the well-formed ones
are swapped for a real record of the fuzz user's (a fresh one for each DELETE). The stateful
run along the document's links is test_fuzz_stateful.py, on a service of its own.

Bounded for CI: MAX_EXAMPLES per operation, derandomized (the same cases every run), no
example database, no shrinking, no deadline (a slow machine is not a failure), and a
timeout on every request (a hang is one). For a longer hunt on demand:
`FUZZ_MAX_EXAMPLES=300 FUZZ_RANDOM=1 python -m pytest tests/openapi/test_fuzz.py` (random cases,
with shrinking; keep what it finds as a test in test_fuzz_findings.py).
"""
import json
import os
import re
from collections import Counter, defaultdict

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.config import load_settings
from service.core.declarations.registry import load_app
from service.openapi import build_document
from tests.conftest import ROOT
from tests.images import multipart, png
from tests.processes import REQUEST_WAIT

PREFIX = "/api/restify"
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES") or 25)
RANDOM = bool(os.environ.get("FUZZ_RANDOM"))
TIMEOUT = REQUEST_WAIT  # seconds per request
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]
BOUNDED = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None,
    phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if RANDOM else []),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    print_blob=False,
)
_ID = re.compile(r"^[0-9a-fA-F]{24}$")
_ASKS_CURRENT_PASSWORD = re.compile(r"^(PUT|POST) /api/restify/profile$|^(PUT|PATCH|POST) /api/restify/users/\{id\}$")

# The document `restify openapi` prints for this app; the served one must be the same
# (test_served_document_is_the_one_fuzzed), so the fuzz runs from the service's own description.
DOCUMENT = build_document(load_app(ROOT), load_settings(ROOT, environ={}))
schema = schemathesis.openapi.from_dict(DOCUMENT)
STATUSES: dict[str, Counter] = defaultdict(Counter)  # operation -> status -> responses seen


class Records:
    """Real records of the fuzz user's, for generated ids to be swapped with."""

    def __init__(self, service, user: dict) -> None:
        self.service, self.user = service, user
        self.headers = {"Authorization": f"Bearer {user['token']}"}
        self.count = 0
        post = self.store("posts", {"title": "Fuzzed"})
        self.shared = {"posts": post, "tags": self.store("tags", {"name": "fuzzed"}), "users": user["id"],
                       "comments": self.store("comments", {"body": "Fuzzed", "post_id": post})}
        body, headers = multipart({"title": "With a cover"}, {"cover": ("c.png", png(), "image/png")})
        covered = self._send("post", f"{PREFIX}/posts", data=body, headers={**self.headers, **headers})
        self.file = covered["data"]["attributes"]["cover"].split("/storage/", 1)[1]

    def _send(self, method: str, path: str, **kwargs) -> dict:
        response = self.service.session.request(method, f"{self.service.url}{path}", timeout=TIMEOUT, **kwargs)
        assert response.status_code == 201, response.text
        return response.json()

    def store(self, name: str, attributes: dict) -> str:
        self.count += 1
        if name == "tags":  # tag names are unique
            attributes = {"name": f"{attributes['name']}-{self.count}"}
        return self._send("post", f"{PREFIX}/{name}", json=attributes, headers=self.headers)["data"]["id"]

    def swap(self, case) -> None:
        """Points about half of the well-formed generated ids (and file paths) at real ones."""
        parameters = case.path_parameters or {}
        if "id" in parameters and isinstance(parameters["id"], str) and _ID.match(parameters["id"]):
            name = case.operation.path.split("/")[3]
            if int(parameters["id"][-1], 16) % 2 == 0 and not (name == "users" and case.method.upper() == "DELETE"):
                parameters["id"] = self._target(name, case.method.upper())  # never the fuzz user's own DELETE
        if "path" in parameters and isinstance(parameters["path"], str) and len(parameters["path"]) % 2 == 0:
            parameters["path"] = self.file

    def fill_current_password(self, case) -> None:
        """Gives about half of the profile and user updates that carry an email or a password the fuzz
        user's real current password (a generated one never matches, so they could never succeed)."""
        body = case.body
        if not (_ASKS_CURRENT_PASSWORD.search(case.operation.label) and isinstance(body, dict)
                and ("email" in body or "password" in body)):
            return
        if len(json.dumps(body, sort_keys=True, default=str)) % 2 == 0:
            body["current_password"] = self.user["password"]

    def note_password(self, case, response) -> None:
        """A password change that went through is the fuzz user's password from now on."""
        body = case.body
        if (response.status_code == 200 and _ASKS_CURRENT_PASSWORD.search(case.operation.label)
                and isinstance(body, dict) and isinstance(body.get("password"), str)
                and response.json().get("id", response.json().get("data", {}).get("id")) == self.user["id"]):
            self.user["password"] = body["password"]

    def _target(self, name: str, method: str) -> str:
        if method != "DELETE":
            return self.shared[name]
        fresh = {"posts": {"title": "Doomed"}, "tags": {"name": "doomed"},
                 "comments": {"body": "Doomed", "post_id": self.shared["posts"]}}[name]
        return self.store(name, fresh)


@pytest.fixture(scope="module")
def user(service):
    return service.register("Fuzz")


@pytest.fixture(scope="module")
def records(service, user):
    return Records(service, user)


def call_kwargs(case, service, token: str) -> dict:
    if case.operation.label == "POST /api/logout":
        token = service.register("Leaving")["token"]  # logging out revokes the token it carries
    return {"base_url": service.url, "session": service.session, "headers": {"Authorization": f"Bearer {token}"},
            "timeout": TIMEOUT}


def validate(case, response) -> None:
    STATUSES[case.operation.label][response.status_code] += 1
    case.validate_response(response, checks=CHECKS)


def test_served_document_is_the_one_fuzzed(service):
    served = service.session.get(f"{service.url}{PREFIX}/openapi.json", timeout=TIMEOUT)
    assert served.status_code == 200
    assert json.loads(served.text) == DOCUMENT


@schema.parametrize()
@BOUNDED
def test_operation_conforms_to_the_document(case, service, user, records):
    records.swap(case)
    records.fill_current_password(case)
    response = case.call(**call_kwargs(case, service, user["token"]))
    validate(case, response)
    records.note_password(case, response)


SUCCESSES = {
    "GET": ["posts", "posts/{id}", "tags", "tags/{id}", "comments/{id}", "users/{id}", "profile", "openapi.json"],
    # The profile's multipart upload is left out: in a whole-suite run its 64 derandomized cases all meet a
    # rule (48 of them 422), though run alone or with tests/openapi some go through; the multipart success
    # path is reached through posts/upload and posts/{id}/upload here.
    "POST": ["posts", "tags", "posts/{id}", "profile", "posts/upload", "posts/{id}/upload"],
    "PUT": ["posts/{id}", "profile"],
    "PATCH": ["posts/{id}", "tags/{id}", "comments/{id}"],
    "DELETE": ["posts/{id}", "tags/{id}", "comments/{id}"],
}


def test_fuzzing_reached_the_success_paths():
    """The fuzz is only worth something if valid requests got through: check that they did."""
    assert STATUSES, "the fuzz tests did not run"
    reached = {operation for operation, seen in STATUSES.items() if any(200 <= s < 300 for s in seen)}
    expected = {f"{method} {PREFIX}/{path}" for method, paths in SUCCESSES.items() for path in paths}
    expected |= {"POST /api/logout", "GET /storage/{path}"}
    missing = {operation: dict(STATUSES.get(operation, {})) for operation in sorted(expected - reached)}
    assert not missing, f"no 2xx for: {missing}"
