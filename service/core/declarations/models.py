"""Models: a MongoDB collection, its relations, and record objects that policies read.

Relations are declared on the model (`posts = has_many("Post")`) and name their
target by class name, resolved lazily so models may refer to each other in any order.
"""
from dataclasses import dataclass
from typing import Any, ClassVar

from service.core.kernel import DeclarationError, collection_name, snake

_MODELS: dict[str, type["Model"]] = {}


@dataclass(frozen=True)
class RelationDecl:
    kind: str            # "belongs_to" | "has_many" | "belongs_to_many"
    target: str          # model class name
    key: str | None      # the stored key; derived from the names when None
    name: str = ""       # attribute name on the owning model, set by Model

    def target_model(self) -> type["Model"]:
        try:
            return _MODELS[self.target]
        except KeyError:
            raise DeclarationError(f"relation {self.name!r} refers to unknown model {self.target!r}") from None

    def local_key(self, owner: type["Model"]) -> str:
        """The key read on the owner's documents (`user_id`, `tag_ids`), or `id` for has_many."""
        if self.kind == "belongs_to":
            return self.key or f"{snake(self.target)}_id"
        if self.kind == "belongs_to_many":
            return self.key or f"{snake(self.target)}_ids"
        return "id"

    def foreign_key(self, owner: type["Model"]) -> str:
        """The key matched on the target's documents."""
        if self.kind == "has_many":
            return self.key or f"{snake(owner.__name__)}_id"
        return "id"


def belongs_to(target: str, key: str | None = None) -> RelationDecl:
    return RelationDecl("belongs_to", target, key)


def has_many(target: str, key: str | None = None) -> RelationDecl:
    return RelationDecl("has_many", target, key)


def belongs_to_many(target: str, key: str | None = None) -> RelationDecl:
    return RelationDecl("belongs_to_many", target, key)


class Model:
    """A stored record. Subclasses declare `collection`, relations and `eager`."""

    collection: ClassVar[str] = ""
    eager: ClassVar[tuple[str, ...]] = ()
    relations: ClassVar[dict[str, RelationDecl]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("collection"):
            cls.collection = collection_name(cls.__name__)
        relations = dict(getattr(cls, "relations", {}))
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, RelationDecl):
                relations[name] = RelationDecl(value.kind, value.target, value.key, name)
                delattr(cls, name)  # records expose stored values, not declarations
        cls.relations = relations
        for name in cls.eager:
            if name not in relations:
                raise DeclarationError(f"{cls.__name__}.eager names {name!r}, which is not a relation of the model")
        _MODELS[cls.__name__] = cls

    def __init__(self, attributes: dict[str, Any]) -> None:
        self.__dict__["attributes"] = attributes

    def __getattr__(self, name: str) -> Any:
        # Missing attributes read as None, like an absent document key.
        if name.startswith("__"):
            raise AttributeError(name)
        return self.__dict__["attributes"].get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__["attributes"][name] = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and type(other) is type(self) and other.id == self.id

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.id))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"
