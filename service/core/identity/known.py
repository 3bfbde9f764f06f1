"""Who a token is, remembered by this process: the hash of the bearer text -> the stored token and its
user's document, so an authenticated request that is known reads nothing before its work.

Bounded by `auth.identity_cache_size` (the least recently used entry goes first; 0 keeps nothing).
An entry stops answering:
- at once after this process updates or deletes a user, or deletes a token: an entry keeps the
  collections' `revision` / `removals` counters of when it was read and must match them (storage);
- within the change streams' delay after another process does (a quarter second at most on a server
  whose streams are polled, as the embedded one's are): `follow` listens to the tokens and users
  collections; a token changed or deleted, a user updated or deleted (a password change, a deletion)
  drops their entries;
- after `auth.identity_ttl` seconds where there are no change streams (a standalone MongoDB), or
  before they are open, or while one of them is failing;
- at once when one of the streams fails or loses its place (changes may then be missed): everything
  remembered is forgotten.
Only a process that follows (`follow`: every `restify serve` process) remembers anything; any other
(a console command) reads the token and its user every time.
"""
import asyncio
import logging
import math
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.core.identity.tokens import TOKENS
from storage import Change, ChangesUnsupported, Unavailable

if TYPE_CHECKING:
    from service.core.declarations import Restify

log = logging.getLogger("restify.identity")
RETRY_SECONDS = 1.0
# How long the streams may rest between empty reads (where the server answers an idle read at once, as
# the embedded one does): a quarter of the one second in which a change elsewhere must take effect.
# The live feeds' pause (`live.idle_ms`) is far shorter; while they listen too, theirs is kept.
FOLLOW_REST_SECONDS = 0.25
_GRANT = ("user_id", "token_hash", "abilities", "expires_at")  # what a token grants, and to whom


@dataclass
class Known:
    token: dict[str, Any]   # the stored token (its hash never leaves it)
    user: dict[str, Any]    # the user's document as stored
    stamp: tuple[int, int]  # this process's writes to users and tokens when both were read
    until: float            # time.monotonic() after which it is read again


class Identities:
    """The remembered identities of one application in this process."""

    def __init__(self, size: int, ttl: float) -> None:
        self.size, self.ttl = size, ttl
        self.generation = 0  # moves on each invalidation: a read that raced one is not remembered
        self.following = False  # remembering at all: with a TTL, or without one while `watching`
        self.watching = False
        self.watched = asyncio.Event()  # set once the change streams are open
        self.streams: tuple[Any, ...] = ()  # the watchers followed (`sound` while read without error)
        self._entries: OrderedDict[str, Known] = OrderedDict()
        self._keys_of_token: dict[str, str] = {}
        self._keys_of_user: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, stamp: tuple[int, int]) -> Known | None:
        known = self._entries.get(key)
        if known is None:
            return None
        if known.stamp != stamp or known.until < time.monotonic():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return known

    def put(self, key: str, known: Known, generation: int) -> None:
        """Remembers `known`, unless something was invalidated since its reads began (`generation`)."""
        if generation != self.generation or self.size <= 0 or not self.following:
            return
        sound = self.watching and all(stream.sound for stream in self.streams)
        known.until = math.inf if sound else time.monotonic() + self.ttl
        self._drop(key)
        self._entries[key] = known
        self._keys_of_token[known.token["id"]] = key
        self._keys_of_user.setdefault(str(known.token.get("user_id")), set()).add(key)
        while len(self._entries) > self.size:
            self._drop(next(iter(self._entries)))

    def forget_token(self, token_id: str) -> None:
        self.generation += 1
        key = self._keys_of_token.get(token_id)
        if key is not None:
            self._drop(key)

    def forget_user(self, user_id: str) -> None:
        self.generation += 1
        for key in list(self._keys_of_user.get(user_id, ())):
            self._drop(key)

    def forget_all(self) -> None:
        """Nothing remembered answers any more (a change stream failed: changes may have been missed)."""
        self.generation += 1
        for key in list(self._entries):
            self._drop(key)

    def start_watching(self) -> None:
        self.generation += 1  # a read made before the streams opened is not trusted beyond its TTL
        self.watching = True
        self.watched.set()

    def stop_following(self) -> None:
        """Nothing is remembered any more, and nothing remembered answers."""
        self.following = self.watching = False
        self.watched.clear()
        self.forget_all()

    async def on_tokens(self, changes: list[Change]) -> None:
        for change in changes:
            if change.operation != "insert" and not self._only_used(change):
                self.forget_token(change.id)

    async def on_users(self, changes: list[Change]) -> None:
        for change in changes:
            if change.operation != "insert":  # a new user is no one's stale memory
                self.forget_user(change.id)

    def _only_used(self, change: Change) -> bool:
        """Whether `change` only marked a remembered token used (`last_used_at`, once a minute): it
        then stays, with the new mark."""
        key = self._keys_of_token.get(change.id)
        known = self._entries.get(key) if key is not None else None
        if known is None or change.operation != "update" or change.document is None:
            return False
        if any(change.document.get(name) != known.token.get(name) for name in _GRANT):
            return False
        known.token["last_used_at"] = change.document.get("last_used_at")
        return True

    def _drop(self, key: str) -> None:
        known = self._entries.pop(key, None)
        if known is None:
            return
        self._keys_of_token.pop(known.token["id"], None)
        user = str(known.token.get("user_id"))
        keys = self._keys_of_user.get(user)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._keys_of_user[user]


_IDENTITIES: "weakref.WeakKeyDictionary[Restify, Identities]" = weakref.WeakKeyDictionary()


def identities(app: "Restify") -> Identities:
    """The identities this process remembers for `app` (made on first use)."""
    app = app.origin  # one per application, whichever pinned view asks
    if app not in _IDENTITIES:
        _IDENTITIES[app] = Identities(int(app.settings.number("auth", "identity_cache_size")),
                                      float(app.settings.number("auth", "identity_ttl")))
    return _IDENTITIES[app]


async def follow(app: "Restify", users_collection: str, stop: asyncio.Event) -> None:
    """Keeps `app`'s identities in step with the tokens and users collections' change streams until
    `stop` is set; where the database has none, entries live their TTL."""
    known = identities(app)
    tokens = app.watcher(TOKENS)
    users = app.watcher(users_collection)
    known.following = True  # with the TTL until the streams are open
    known.streams = (tokens, users)
    for stream in known.streams:
        stream.on_trouble(known.forget_all)
    try:
        while not stop.is_set():
            try:
                await tokens.listen(known.on_tokens, rest=FOLLOW_REST_SECONDS)
                await users.listen(known.on_users, rest=FOLLOW_REST_SECONDS)
                break
            except Unavailable as error:
                log.warning("cannot follow tokens and users (%s); trying again", error)
                await _rest(stop)
        else:
            return
        known.start_watching()
        await stop.wait()
    except ChangesUnsupported:
        log.info("no change streams: who a token is is remembered %s s at most", known.ttl)
        await stop.wait()
    finally:
        known.stop_following()
        for stream in known.streams:
            stream.forget_trouble(known.forget_all)
        known.streams = ()
        tokens.forget(known.on_tokens)
        users.forget(known.on_users)


async def _rest(stop: asyncio.Event) -> None:
    try:
        await asyncio.wait_for(stop.wait(), RETRY_SECONDS)
    except asyncio.TimeoutError:
        pass
