"""An SMTP server per test, and the service's mail settings pointing at it."""
import pytest

from tests.smtp import SmtpServer


@pytest.fixture
def smtp():
    server = SmtpServer()
    yield server
    server.stop()


@pytest.fixture
def config(config, smtp, request):
    """The conftest settings, mail sent to this test's SMTP server, and this test's overrides."""
    extra = getattr(request, "param", {})
    return {**config, "mail": {"url": smtp.url, **extra.get("mail", {})},
            "auth": {**config["auth"], **extra.get("auth", {})}}
