"""Webhooks against a real receiver: the demo application with webhooks added to its repositories, and
settings that make retries come within a test's patience (the clock is moved by `deliver(now=...)`)."""
import pytest

from service.core.declarations import Webhook
from tests.webhooks.receiver import Receiver

SECRET = "s3cret-for-tests"
EVENTS = ("posts.created", "posts.updated", "posts.deleted")


@pytest.fixture
def receiver():
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def config(config):
    return {**config, "webhooks": {"timeout_seconds": 0.5, "retry_seconds": 1, "lease_seconds": 30}}


def hook(registry, name: str, *webhooks: Webhook) -> None:
    """Declares `webhooks` on the repository `name` of this test's freshly loaded application."""
    type(registry.resources[name].repository).webhooks = list(webhooks)


def declare(app_dir, webhooks: str) -> None:
    """Writes `webhooks = <webhooks>` (Python source) into PostRepository of the application copy in `app_dir`."""
    posts = app_dir / "repositories" / "posts.py"
    text = posts.read_text().replace("from service import ", "from service import Webhook, ", 1)
    posts.write_text(text.replace("class PostRepository(Repository):\n",
                                  f"class PostRepository(Repository):\n    webhooks = {webhooks}\n", 1))
