"""Webhooks: a repository's changes POSTed to another system (`webhooks = [Webhook(...)]` on the
repository; delivered by `service/webhooks`, by whichever `restify serve` process holds the webhook's
lease). Checked when the registry is built: a bad declaration fails at start, naming the repository.
"""
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from service.core.kernel import DeclarationError

ACTIONS = ("created", "updated", "deleted")


@dataclass(frozen=True)
class Webhook:
    """POST each change of the repository named by `events` (`<repository>.<created|updated|deleted>`)
    to `url`, signed with `secret`; the record as a guest sees it, or as the user with email `user`."""
    url: str
    events: tuple[str, ...] = ()
    secret: str = ""
    user: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url) if isinstance(self.url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise DeclarationError(f"Webhook({self.url!r}): the URL must be an http:// or https:// address")
        if not isinstance(self.secret, str) or not self.secret:
            raise DeclarationError(f"Webhook({self.url!r}): a secret is required (its deliveries are signed with it)")
        if isinstance(self.events, str) or not self.events or not all(isinstance(e, str) for e in self.events):
            raise DeclarationError(f"Webhook({self.url!r}): events must be a tuple of names such as "
                                   f"'posts.created'")
        if self.user is not None and (not isinstance(self.user, str) or "@" not in self.user):
            raise DeclarationError(f"Webhook({self.url!r}): user must be the email of a user, or None for a guest")

    def actions(self) -> tuple[str, ...]:
        return tuple(event.rpartition(".")[2] for event in self.events)

    def key(self, repository: str) -> str:
        """The webhook's name in the database (its deliveries, cursor and lease)."""
        return f"{repository} {self.url}"


def webhooks_of(repository: Any, name: str) -> list[Webhook]:
    """The repository's declared webhooks, checked: a list of Webhook, each on this repository's events
    only, no URL twice."""
    declared = getattr(type(repository), "webhooks", None) or []
    if not isinstance(declared, (list, tuple)) or not all(isinstance(w, Webhook) for w in declared):
        raise DeclarationError(f"{type(repository).__name__}.webhooks must be a list of Webhook(...)")
    known = {f"{name}.{action}" for action in ACTIONS}
    urls: set[str] = set()
    for webhook in declared:
        unknown = sorted(set(webhook.events) - known)
        if unknown:
            raise DeclarationError(f"{type(repository).__name__}: Webhook({webhook.url!r}) names unknown events "
                                   f"{', '.join(unknown)}; choose from {', '.join(sorted(known))}")
        if webhook.url in urls:
            raise DeclarationError(f"{type(repository).__name__}: two webhooks to {webhook.url!r}; "
                                   f"give one its events")
        urls.add(webhook.url)
    return list(declared)
