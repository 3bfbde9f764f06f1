"""Repositories: what a model exposes, how it is validated, which relations it offers.

A repository is bound to its model in exactly one of three ways:
    @model(Post) on the class | `model = Post` or a dotted path | the name (PostRepository -> Post)
"""
import importlib
from typing import Any, ClassVar

from service.core.declarations.fields import Field
from service.core.declarations.models import Model
from service.core.declarations.relations import Related
from service.core.kernel import DeclarationError

MCP_OPERATIONS = ("index", "show", "store", "update", "delete", "profile", "bulk-store", "bulk-update", "bulk-delete",
                  "attach", "detach", "sync", "actions", "getters", "aggregate")
WAYS = ("the @model(...) decorator", "a `model = ...` class property (class or dotted path)",
        "naming it after the model (PostRepository -> Post in the models module)")


def model(model_class: type[Model]) -> Any:
    """Class decorator binding a repository to `model_class`."""
    def bind(repository: type["Repository"]) -> type["Repository"]:
        repository._decorated_model = model_class
        return repository
    return bind


class Repository:
    model: ClassVar[Any] = None
    uri_key: ClassVar[str] = ""
    per_page: ClassVar[int | None] = None
    # MCP tools for agents (service/mcp): False (none), True (read-only: "index", "show"), or a tuple
    # of operations from MCP_OPERATIONS; "profile" counts only on the user repository (auth.user_repository),
    # "attach", "detach" and "sync" only on one with a BelongsToMany relation.
    mcp: ClassVar[bool | tuple[str, ...]] = False
    # A delete trashes the record (sets `deleted_at`) and every read leaves it out until it is restored;
    # `?force=true` deletes it for good (service/core/reading/visibility.py, operations/trash.py).
    soft_deletes: ClassVar[bool] = False
    # Changes POSTed to other systems: a list of service.Webhook (service/core/declarations/webhooks.py).
    webhooks: ClassVar[list[Any]] = []
    _decorated_model: ClassVar[type[Model] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.mcp_operations()  # a misspelt operation fails when the module loads, naming the class

    @classmethod
    def mcp_operations(cls) -> tuple[str, ...]:
        """The operations this repository exposes as MCP tools, in MCP_OPERATIONS order."""
        declared = cls.mcp
        if declared is True:
            return ("index", "show")
        if declared is False or declared is None:
            return ()
        names = (declared,) if isinstance(declared, str) else declared
        if not isinstance(names, (tuple, list, set, frozenset)) or not all(isinstance(n, str) for n in names):
            raise DeclarationError(f"{cls.__name__}.mcp = {declared!r}: use True, False or a tuple of operations "
                                   f"from {', '.join(MCP_OPERATIONS)}")
        unknown = sorted(set(names) - set(MCP_OPERATIONS))
        if unknown:
            raise DeclarationError(f"{cls.__name__}.mcp names unknown operations {', '.join(unknown)}; "
                                   f"choose from {', '.join(MCP_OPERATIONS)}")
        return tuple(n for n in MCP_OPERATIONS if n in names)

    @classmethod
    def related(cls) -> dict[str, Related]:
        return {}

    def fields(self, request: Any) -> list[Field]:
        return []

    @classmethod
    def can_use_for_profile(cls, request: Any) -> bool:
        return False

    # -- beyond the five operations (service/core/operations/actions.py, getters.py): instances or classes,
    # listed per request; an instance method or a classmethod.
    def actions(self, context: Any) -> list[Any]:
        return []

    def getters(self, context: Any) -> list[Any]:
        return []

    # -- hooks: run by the write path (service/core/writing/writes.py) for every door --------------------
    # Plain or `async`. A before-hook may change `values` (they are not validated again) or raise
    # ValidationFailed / Forbidden, and then nothing is written. After-hooks see the stored record.
    def before_store(self, context: Any, values: dict[str, Any]) -> Any:
        return None

    def stored(self, context: Any, record: Model) -> Any:
        return None

    def before_update(self, context: Any, record: Model, values: dict[str, Any]) -> Any:
        return None

    def updated(self, context: Any, record: Model) -> Any:
        return None

    def before_delete(self, context: Any, record: Model) -> Any:
        return None

    def deleted(self, context: Any, record: Model) -> Any:
        return None

    # -- binding ------------------------------------------------------------
    @classmethod
    def resolve_model(cls, models_module: str) -> type[Model]:
        decorated = cls.__dict__.get("_decorated_model")
        declared = cls.__dict__.get("model")
        if decorated is not None and declared is not None:
            raise DeclarationError(f"{cls.__name__} binds its model twice; use exactly one of: " + "; ".join(WAYS))
        if decorated is not None:
            return decorated
        if declared is not None:
            return _load_model(cls, declared)
        if cls.__name__.endswith("Repository") and cls.__name__ != "Repository":
            guessed = cls.__name__[: -len("Repository")]
            try:
                module = importlib.import_module(models_module)
            except ImportError as error:
                raise DeclarationError(
                    f"{cls.__name__}: cannot import models module {models_module!r}: {error}") from error
            found = getattr(module, guessed, None)
            if isinstance(found, type) and issubclass(found, Model):
                return found
        raise DeclarationError(
            f"{cls.__name__}: cannot resolve its model. Bind it in one of three ways: " + "; ".join(WAYS)
        )


def _load_model(repository: type[Repository], declared: Any) -> type[Model]:
    if isinstance(declared, type) and issubclass(declared, Model):
        return declared
    if isinstance(declared, str) and "." in declared:
        module_name, _, name = declared.rpartition(".")
        try:
            found = getattr(importlib.import_module(module_name), name, None)
        except ImportError:
            found = None
        if isinstance(found, type) and issubclass(found, Model):
            return found
    raise DeclarationError(f"{repository.__name__}.model = {declared!r} is not a Model class or a dotted path to one")
