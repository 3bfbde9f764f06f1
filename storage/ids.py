"""Id conversion: ObjectId inside the database, 24-hex strings everywhere else."""
from typing import Any, TypeGuard, overload

from bson import ObjectId
from bson.errors import InvalidId


def is_valid_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and ObjectId.is_valid(value) and len(value) == 24


def to_object_id(value: str) -> ObjectId | None:
    """The ObjectId for `value`, or None when it is not a valid id string."""
    if not is_valid_id(value):
        return None
    try:
        return ObjectId(value)
    except InvalidId:  # pragma: no cover - is_valid_id already checked
        return None


@overload
def canonical_id(value: str) -> str: ...
@overload
def canonical_id(value: object) -> object: ...
def canonical_id(value: object) -> object:
    """A valid id in its one stored spelling (lowercase hex); anything else unchanged.

    The database accepts any case of hex for `_id`, but a reference stored in another field is
    compared as a string: stored as typed, `post_id` "6650AB..." never meets post "6650ab..."."""
    return value.lower() if is_valid_id(value) else value


def new_id() -> str:
    return str(ObjectId())


@overload
def to_plain(document: dict) -> dict: ...
@overload
def to_plain(document: None) -> None: ...
def to_plain(document: dict | None) -> dict | None:
    """A stored document with `_id` turned into the string `id`."""
    if document is None:
        return None
    document["id"] = str(document.pop("_id"))  # in place: the driver's dict is ours, no copy needed
    return document


def ids_as_text(query: Any) -> Any:
    """`query` with every ObjectId in it written as its hex text; `query` itself when it holds none.
    For a server that compares `_id` as that text where it cannot bind an ObjectId (the embedded
    server's aggregate, see `IndexSupport.aggregate_binds_ids`)."""
    if isinstance(query, ObjectId):
        return str(query)
    if isinstance(query, dict):
        converted = {key: ids_as_text(value) for key, value in query.items()}
        return query if all(converted[key] is value for key, value in query.items()) else converted
    if isinstance(query, (list, tuple)):
        items = [ids_as_text(value) for value in query]
        return query if all(new is old for new, old in zip(items, query, strict=True)) else items
    return query
