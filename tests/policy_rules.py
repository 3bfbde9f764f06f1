"""Read rules for tests: `rules("comments", scope=..., show=...)` replaces those methods of the demo
policy of a repository for one test, and the rules the tests use most."""
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service import any_of


@pytest.fixture
def rules(registry) -> Iterator[Callable[..., None]]:
    changed: list[tuple[Any, str]] = []

    def set_rules(name: str, **methods: Callable[..., Any]) -> None:
        policy = registry.policies.for_model(registry.get(name).model)
        for method, function in methods.items():
            setattr(policy, method, function)
            changed.append((policy, method))

    yield set_rules
    for policy, method in changed:
        policy.__dict__.pop(method, None)


def own_scope(user) -> Any:
    """Only the user's own records; guests none."""
    return {"user_id": user.id} if user is not None else False


def published_or_own_scope(user) -> Any:
    return any_of({"published": True}, {"user_id": user.id}) if user is not None else {"published": True}


def published_or_own_show(user, record) -> bool:
    return bool(record.published) or (user is not None and record.user_id == user.id)
