"""Opaque cursors for keyset pages.

A cursor names a position (the sort values of one record, id last) and a direction. It is sealed
with AES-256-GCM: encrypted, so nobody can read a sort value out of it (a page sorted by a field
says nothing of the next record's value), and authenticated, so a client can neither forge a
position nor carry a cursor over to a query with another sort, other filters or another perPage
(the sealed text holds a digest of those). The token is the direction (`n` next, `p` previous),
in the clear but authenticated, then the URL-safe base64 of the 96-bit nonce and the ciphertext
with its tag. The nonce is synthetic: an HMAC, under a key of its own, of what is sealed, so one
position of one query always gives the same cursor (a page's answer, and so its ETag, stays the
same while its records do), and two different ones share a nonce no more often than random
nonces would.

The key is derived (HKDF-SHA256) from `query.cursor_secret`; unset, the first process creates
`var/cursor.key` in the app directory and every process started from that directory reads it.
Processes on several hosts must be given the same `query.cursor_secret` (e.g.
`RESTIFY_QUERY_CURSOR_SECRET`).
"""
import base64
import binascii
import hashlib
import hmac
import json
import math
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from service.config import Settings
from service.core.kernel import BadRequest
from storage import RELEVANCE, Collection, Filter

KEY_FILE = Path("var") / "cursor.key"
MAX_SKIP = 2**63 - 1
_BINDING_CHARS = 16  # of the hex digest: plenty to tell two queries apart, the seal does the rest
_NONCE_BYTES = 12
_TAG_BYTES = 16
_DIRECTIONS = {"n": True, "p": False}
_LABEL = b"restify index cursor v2"  # the key's HKDF info, and the start of every seal's associated data


@dataclass(frozen=True)
class Position:
    forward: bool            # records after `values` (next page) or before them (previous page)
    values: tuple[Any, ...]  # one per sort key, the id last


def cursor_key(settings: Settings) -> bytes:
    configured = settings.value("query", "cursor_secret")
    if configured:
        return str(configured).encode()
    return _deployment_key(settings.app_dir)


@lru_cache(maxsize=16)
def _deployment_key(app_dir: Path) -> bytes:
    file = app_dir / KEY_FILE
    if not file.is_file():
        file.parent.mkdir(parents=True, exist_ok=True)
        draft = file.with_name(f"{file.name}.{os.getpid()}.{secrets.token_hex(4)}")
        draft.write_text(secrets.token_hex(32))
        draft.chmod(0o600)
        try:
            os.link(draft, file)  # atomic create-if-absent: concurrent first starts agree on one key
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return file.read_text().strip().encode()


def cursor_binding(*parts: Any) -> str:
    """A digest of what a cursor is bound to (sort, filters, perPage...)."""
    text = orjson.dumps(parts, default=str, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(text).hexdigest()[:_BINDING_CHARS]


def once(compute: Callable[[], str]) -> Callable[[], str]:
    """`compute` (a cursor's binding, or its seal), worked out on the first call only: an answer without
    its page's meta seals no cursor, so it never works either out."""
    found: list[str] = []

    def remembered() -> str:
        if not found:
            found.append(compute())
        return found[0]
    return remembered


def encode(secret: bytes, bound: str, position: Position) -> str:
    direction = "n" if position.forward else "p"
    sealed = [bound, [_plain(v) for v in position.values]]
    return direction + _seal(secret, direction, _sealed_json(sealed, position.values))


@lru_cache(maxsize=1024)
def _seal(secret: bytes, direction: str, body: bytes) -> str:
    """`body` sealed. The nonce is derived from what it seals, so a seal is a function of its inputs:
    the cursors of the pages most asked for (the first pages of lists) are sealed once."""
    cipher, nonce_mac = _keys(secret)
    associated = _LABEL + direction.encode()
    mac = nonce_mac.copy()
    mac.update(associated + b"\0" + body)
    nonce = mac.digest()[:_NONCE_BYTES]
    return _b64(nonce + cipher.encrypt(nonce, body, associated))


def _sealed_json(sealed: list[Any], values: tuple[Any, ...]) -> bytes:
    """What a cursor seals, as JSON. orjson writes NaN and infinities as null and refuses integers
    past 64 bits: positions holding those keep the standard encoder's spelling (`json.loads` reads both)."""
    if all(type(v) is not float or math.isfinite(v) for v in values):
        try:
            return orjson.dumps(sealed)
        except TypeError:
            pass
    return json.dumps(sealed, separators=(",", ":")).encode()


def decode(secret: bytes, bound: str, token: str, size: int) -> Position:
    """The position `token` names; a 400 when it was altered, forged, sealed with another key or
    in an older format, or made for another query or sort."""
    made_for, position = unseal(secret, token)
    if made_for != bound or len(position.values) != size:
        raise _bad("The cursor belongs to another query: keep its sort, filters and perPage.")
    return position


def unseal(secret: bytes, token: str) -> tuple[str, Position]:
    """What a cursor was made for (its binding) and the position it names, once its seal is checked;
    a 400 otherwise. `decode` then checks the binding (the benchmark's bare app reads positions here)."""
    direction, sealed = token[:1], token[1:]
    try:
        if direction not in _DIRECTIONS or not sealed.isascii():
            raise ValueError("not a cursor")
        raw = base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
        if _b64(raw) != sealed or len(raw) < _NONCE_BYTES + _TAG_BYTES:  # one spelling per cursor
            raise ValueError("not a cursor")
        body = _keys(secret)[0].decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _LABEL + direction.encode())
        made_for, values = json.loads(body)
        if not isinstance(values, list):
            raise ValueError("not a position")
    except (ValueError, TypeError, binascii.Error, InvalidTag):
        raise _bad("The cursor is not valid.") from None
    return made_for, Position(_DIRECTIONS[direction], tuple(_value(v) for v in values))


def reads_forward(token: str) -> bool | None:
    """Whether a cursor is a next (True) or a previous page's (False), for doors that take them apart
    (GraphQL's `after` and `before`); None when it says neither: `decode` refuses it then.
    Read without the key (the direction is in the clear): this only chooses an error message, and
    `decode` checks the seal, which covers the direction too."""
    return _DIRECTIONS.get(token[:1]) if isinstance(token, str) else None


@lru_cache(maxsize=16)
def _keys(secret: bytes) -> tuple[AESGCM, hmac.HMAC]:
    """AES-256-GCM and the nonce's HMAC (keyed, to be copied), both derived from the configured secret
    (any text)."""
    derived = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=_LABEL).derive(secret)
    return AESGCM(derived[:32]), hmac.new(derived[32:], digestmod=hashlib.sha256)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _plain(value: Any) -> Any:
    return ["d", value.isoformat()] if isinstance(value, datetime) else value


def _value(value: Any) -> Any:
    return datetime.fromisoformat(value[1]) if isinstance(value, list) else value


def _bad(message: str) -> BadRequest:
    return BadRequest(message, {"cursor": [message]})


@dataclass
class Page:
    documents: list[dict[str, Any]]
    skip: int | None             # None in cursor mode
    more: bool                   # records follow this page (in the direction it was read)
    # The cursors of the pages beside this one (None at the ends), sealed when first read: an answer
    # without its page's meta never pays for them.
    seal_next: Callable[[], str] | None
    seal_prev: Callable[[], str] | None

    def __post_init__(self) -> None:
        # Each seal is worked out once, however often the answer reads it.
        self.seal_next = once(self.seal_next) if self.seal_next is not None else None
        self.seal_prev = once(self.seal_prev) if self.seal_prev is not None else None

    @property
    def next_cursor(self) -> str | None:
        return self.seal_next() if self.seal_next is not None else None

    @property
    def prev_cursor(self) -> str | None:
        return self.seal_prev() if self.seal_prev is not None else None


async def read_cursor_page(collection: Collection, where: Filter, sort: list[tuple[str, int]], per_page: int,
                           page: int, cursor: str | None, secret: bytes, binding: Callable[[], str],
                           fields: tuple[str, ...] = ()) -> Page:
    """One page by number (`cursor` None) or by keyset position; either way with the cursors
    of the pages beside it, null at the ends. `fields`: only these of each record (and the sort's keys).
    `binding`: what the cursors are bound to (`cursor_binding`), worked out when one is read or sealed."""
    keys = [name for name, _ in sort]

    def at(document: dict[str, Any] | None, values: tuple[Any, ...], forward: bool) -> Callable[[], str]:
        def seal() -> str:
            found = values if document is None else tuple(document["id"] if k == "id" else document.get(k)
                                                          for k in keys)
            return encode(secret, binding(), Position(forward, found))
        return seal

    if cursor is None:
        skip = (page - 1) * per_page
        # A page past 64 bits of skip is past any real collection: empty, without asking the server.
        fits = skip + per_page <= MAX_SKIP
        rows = await collection.find(where, sort=sort, skip=skip, limit=min(per_page + 1, MAX_SKIP),
                                     fields=fields) if fits else []
        more = len(rows) > per_page
        rows = rows[:per_page]
        if RELEVANCE in keys:  # a score is no stored value: these pages are read by number only
            return Page(rows, skip, more, None, None)
        return Page(rows, skip, more, at(rows[-1], (), True) if more else None,
                    at(rows[0], (), False) if rows and skip else None)
    start = decode(secret, binding(), cursor, len(keys)) if cursor else None
    forward = start is None or start.forward
    walk = sort if forward else [(name, -direction) for name, direction in sort]
    after = (tuple(walk), start.values) if start is not None else None
    rows = await collection.find(replace(where, after=after), sort=walk, limit=min(per_page + 1, MAX_SKIP),
                                 fields=fields)
    more = len(rows) > per_page
    rows = rows[:per_page]
    if not forward:
        rows.reverse()
    # The side a walk came from has records; an empty page points back to where it started.
    values = start.values if start is not None else ()
    first, last = (rows[0], rows[-1]) if rows else (None, None)
    ahead = more if forward else True
    behind = start is not None if forward else more
    return Page(rows, None, more, at(last, values, True) if ahead and (rows or start) else None,
                at(first, values, False) if behind and (rows or start) else None)
