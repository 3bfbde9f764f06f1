"""`X-Forwarded-For` moves the login-throttle address only when `server.trust_proxy_headers` is on:
otherwise a client could name a fresh address for every attempt and never be throttled."""
import pytest

from service.console.application import make_server

ATTEMPTS_PER_ADDRESS = 3


@pytest.fixture
def config(config, request):
    config["auth"].update({"login_attempts_per_account": 100, "login_attempts_per_address": ATTEMPTS_PER_ADDRESS})
    config["server"] = {"trust_proxy_headers": request.param}
    return config


@pytest.fixture
def http_server(restify, io_loop, http_server_port):
    # The server `restify serve` runs, not the plain one the plugin would build.
    server = make_server(restify)
    server.add_socket(http_server_port[0])
    yield server
    server.stop()


async def _login(api, email: str, forwarded_for: str):
    return await api.post("/api/login", {"email": email, "password": "wrong-password"},
                          headers={"X-Forwarded-For": forwarded_for})


@pytest.mark.parametrize("config", [False], indirect=True)
async def test_forwarded_addresses_are_ignored_by_default(api):
    for index in range(ATTEMPTS_PER_ADDRESS):
        assert (await _login(api, f"nobody{index}@example.com", f"203.0.113.{index}")).status == 401
    refused = await _login(api, "someone@example.com", "203.0.113.200")
    assert refused.status == 429
    assert refused.json["message"].startswith("Too many attempts.")


@pytest.mark.parametrize("config", [True], indirect=True)
async def test_a_trusted_proxy_header_gives_each_client_its_own_count(api):
    for index in range(ATTEMPTS_PER_ADDRESS):
        assert (await _login(api, f"nobody{index}@example.com", "203.0.113.7")).status == 401
    assert (await _login(api, "someone@example.com", "203.0.113.7")).status == 429
    # Another client behind the same proxy is not refused for the first one's attempts.
    assert (await _login(api, "someone@example.com", "203.0.113.8")).status == 401
