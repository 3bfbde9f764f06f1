"""Repository-level relations: which model relation is exposed under which name,
serialized through which repository."""
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.core.repository import Repository


@dataclass
class Related:
    attribute: str                       # the model's relation attribute
    repository: "type[Repository] | str"  # class, or its class name, resolved at start-up
    kind: str = ""


class BelongsTo(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "belongs_to")


class HasMany(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "has_many")


class BelongsToMany(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "belongs_to_many")
