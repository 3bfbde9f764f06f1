"""A webhook declared wrong fails at start, saying what is wrong and where."""
import pytest

from service import DeclarationError, Webhook
from service.core.declarations.registry import load_app
from tests.webhooks.conftest import declare


@pytest.mark.parametrize("arguments, message", [
    ({"url": "ftp://example.com/hook", "events": ("posts.created",), "secret": "s"},
     "Webhook('ftp://example.com/hook'): the URL must be an http:// or https:// address"),
    ({"url": "https://example.com/hook", "events": ("posts.created",)},
     "Webhook('https://example.com/hook'): a secret is required (its deliveries are signed with it)"),
    ({"url": "https://example.com/hook", "events": "posts.created", "secret": "s"},
     "Webhook('https://example.com/hook'): events must be a tuple of names such as 'posts.created'"),
    ({"url": "https://example.com/hook", "events": ("posts.created",), "secret": "s", "user": "ann"},
     "Webhook('https://example.com/hook'): user must be the email of a user, or None for a guest"),
])
def test_a_bad_webhook_is_refused_where_it_is_made(arguments, message):
    with pytest.raises(DeclarationError) as refused:
        Webhook(**arguments)
    assert str(refused.value) == message


@pytest.mark.parametrize("declared, message", [
    ('[Webhook("https://example.com/h", events=("posts.created", "posts.published", "tags.created"), secret="s")]',
     "PostRepository: Webhook('https://example.com/h') names unknown events posts.published, tags.created; "
     "choose from posts.created, posts.deleted, posts.updated"),
    ('[Webhook("https://example.com/h", events=("posts.created",), secret="s"), '
     'Webhook("https://example.com/h", events=("posts.deleted",), secret="s")]',
     "PostRepository: two webhooks to 'https://example.com/h'; give one its events"),
    ('"https://example.com/h"', "PostRepository.webhooks must be a list of Webhook(...)"),
])
def test_a_webhook_on_unknown_events_fails_at_start_naming_its_repository(app_copy, declared, message):
    declare(app_copy, declared)
    with pytest.raises(DeclarationError) as refused:
        load_app(app_copy)
    assert str(refused.value).startswith(message)
    assert refused.value.location[0].endswith("repositories/posts.py")
