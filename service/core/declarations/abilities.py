"""What a bearer token may do: its abilities, and which one covers which.

    *                  everything the user may do
    <r>:read           read repository r: index, show, getters, the list of its actions, its live feed,
                       and its records wherever they come as relations of other records
    <r>:write          write repository r (store, update, delete, bulk, attach, detach, sync) and run
                       every action of it; it covers <r>:read, since every write answers the record
    <r>:<action-key>   run that one action of r

Abilities narrow a token; they never widen a user: policies decide as before. A context without a
token (the console, seeders, a guest) has no abilities to check.
"""
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.core.declarations.models import Model

EVERYTHING = "*"
READ, WRITE = "read", "write"


def ability(resource: str, kind: str) -> str:
    """`ability("posts", "read")` -> `"posts:read"`."""
    return f"{resource}:{kind}"


def user_can(user: "Model | None", wanted: str) -> bool:
    """Whether the token `user` came with covers `wanted`; True without a token (a guest, the console)."""
    held = user._abilities if user is not None else None
    return held is None or grants(held, wanted)


def grants(held: Iterable[str], wanted: str) -> bool:
    """Whether abilities `held` cover `wanted`: `*` covers everything; `<r>:write` covers every ability
    of `r` (its read and its actions)."""
    held = frozenset(held)
    if EVERYTHING in held or wanted in held:
        return True
    resource, colon, _ = wanted.partition(":")
    return bool(colon) and ability(resource, WRITE) in held
