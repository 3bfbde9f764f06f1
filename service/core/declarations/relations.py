"""Repository-level relations: which model relation is exposed under which name,
serialized through which repository."""
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.core.declarations.repository import Repository


@dataclass
class Related:
    attribute: str                       # the model's relation attribute
    repository: "type[Repository] | str"  # class, or its class name, resolved at start-up
    kind: str = ""
    # Fields of the related record that `search` also matches, and that `sort=<name>.<field>` orders by.
    search_fields: tuple[str, ...] = field(default=())
    sort_fields: tuple[str, ...] = field(default=())
    # Fields of the related record an index filters by: `<name>.<field>[op]=v`.
    filter_fields: tuple[str, ...] = field(default=())


class BelongsTo(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "belongs_to")

    def searchable(self, *names: str) -> "BelongsTo":
        """`search` also finds records whose parent's `names` contain the text (within the parent's
        own scope for the user): `BelongsTo("user", UserRepository).searchable("name")`."""
        self.search_fields = (*self.search_fields, *names)
        return self

    def sortable(self, *names: str) -> "BelongsTo":
        """Allows `sort=<relation>.<name>` (and `-<relation>.<name>`) on index, in page mode."""
        self.sort_fields = (*self.sort_fields, *names)
        return self

    def filterable(self, *names: str) -> "BelongsTo":
        """Allows `<relation>.<name>[op]=v` on index (and the relation's member of a filter object): the
        records whose parent, as the user may see it, matches."""
        self.filter_fields = (*self.filter_fields, *names)
        return self


class HasMany(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "has_many")


class BelongsToMany(Related):
    def __init__(self, attribute: str, repository: Any) -> None:
        super().__init__(attribute, repository, "belongs_to_many")
