"""Repository hooks for tests: installed on the demo posts repository of a test's registry, they
record each call (door, hook, the record's id and title) and change or refuse what a test asks.
Before-hooks are plain methods here, after-hooks `async`, and `mixed` swaps that: both work."""
from typing import Any

from service.core.kernel.errors import Forbidden, ValidationFailed

REFUSED = {"message": "The given data was invalid.", "errors": {"title": ["Hooks say no."]}}
HOOKS = ("before_store", "stored", "before_update", "updated", "before_delete", "deleted")


class PostHooks:
    def __init__(self, registry: Any, mixed: bool = False) -> None:
        self.calls: list[tuple[str, str, str | None, Any]] = []
        self.refuse: dict[str, Exception] = {}   # hook name -> what it raises
        self.values: dict[str, dict[str, Any]] = {}  # before-hook name -> values it sets
        repository = registry.get("posts").repository
        for name in HOOKS:
            plain = name.startswith("before_") != mixed
            setattr(repository, name, self._plain(name) if plain else self._async(name))

    def _run(self, name: str, context: Any, record: Any = None, values: dict[str, Any] | None = None) -> None:
        self.calls.append((context.door, name, getattr(record, "id", None),
                           values.get("title") if values is not None else record.title))
        if name in self.refuse:
            raise self.refuse[name]
        if values is not None:
            values.update(self.values.get(name, {}))

    def _plain(self, name: str) -> Any:
        return lambda context, *args: self._run(name, context, *_split(name, args))

    def _async(self, name: str) -> Any:
        async def hook(context: Any, *args: Any) -> None:
            self._run(name, context, *_split(name, args))
        return hook

    def names(self) -> list[str]:
        return [name for _, name, _, _ in self.calls]


def _split(name: str, args: tuple) -> tuple:
    """(record, values) from a hook's arguments: before_store has only values."""
    if name == "before_store":
        return None, args[0]
    return args if len(args) == 2 else (args[0], None)


def refused() -> ValidationFailed:
    return ValidationFailed({"title": ["Hooks say no."]})


def forbidden() -> Forbidden:
    return Forbidden()
