"""Who a token is, remembered by each `restify serve` process, follows what another process does
within a second: a revocation, a password change, a deleted user."""
import time

import pytest

from tests.processes import ROOT, Server, register, request

PREFIX = "/api/restify"
PROFILE = f"{PREFIX}/profile"
WITHIN = 1.0  # seconds


@pytest.fixture
def servers(database_env, tmp_path):
    # A TTL far beyond the second: what refuses in time is the change streams.
    env = {**database_env, "RESTIFY_AUTH_IDENTITY_TTL": "600"}
    first, second = Server(ROOT, env, log_dir=tmp_path), Server(ROOT, env, log_dir=tmp_path)
    yield first, second
    assert first.stop() == 0
    assert second.stop() == 0


def _known_on(server: Server, token: str) -> None:
    """Asks twice: the second answer comes from what the process remembers."""
    for _ in range(2):
        assert request(server.port, "GET", PROFILE, token=token)[0] == 200


def _refused_within(server: Server, token: str) -> float:
    """Polls until the token is refused; how long that took after the change was answered."""
    changed = time.monotonic()
    while (status := request(server.port, "GET", PROFILE, token=token)[0]) == 200 \
            and time.monotonic() - changed < WITHIN:
        pass
    assert status == 401, f"still answered {WITHIN} s after the change"
    return time.monotonic() - changed


def _login(port: int, email: str, password: str = "secret-pass") -> str:
    status, body = request(port, "POST", "/api/login", {"email": email, "password": password})
    assert status == 200, body
    return body["meta"]["token"]


def test_a_revoked_token_is_refused_by_another_process_within_a_second(servers):
    first, second = servers
    token = register(second.port, email="revoked@example.com")
    other = _login(second.port, "revoked@example.com")
    _known_on(first, token)
    status, _ = request(second.port, "DELETE", f"/api/tokens/{token.partition('|')[0]}", token=other)
    assert status == 204
    _refused_within(first, token)
    assert request(first.port, "GET", PROFILE, token=other)[0] == 200


def test_a_password_change_is_refused_by_another_process_within_a_second(servers):
    first, second = servers
    token = register(second.port, email="changed@example.com")
    other = _login(second.port, "changed@example.com")
    _known_on(first, token)
    status, body = request(second.port, "PUT", PROFILE, {
        "name": "Ann", "email": "changed@example.com", "password": "another-pass",
        "password_confirmation": "another-pass", "current_password": "secret-pass"}, token=other)
    assert status == 200, body
    _refused_within(first, token)


def test_a_deleted_user_is_refused_by_another_process_within_a_second(servers):
    first, second = servers
    token = register(second.port, email="deleted@example.com")
    _known_on(first, token)
    status, body = request(second.port, "GET", PROFILE, token=token)
    assert request(second.port, "DELETE", f"{PREFIX}/users/{body['id']}", token=token)[0] == 204
    _refused_within(first, token)
