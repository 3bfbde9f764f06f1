"""Login and registration throttles, per account and per client address.

Each attempt is counted first, with one atomic increment in MongoDB, and only then
judged: N parallel attempts see N distinct counts, so no more than the limit ever reach
the password check. Counts live in the database, so every web process and host shares
them. Windows are fixed (`<key>@<window start>`): at a window's edge a client may get up
to twice the limit in quick succession, never more.

An attempt under a key already over its limit is refused after a pause (`REFUSAL_PAUSE`): the
client was told when to come back and came sooner. A storm whose clients wait for each answer then
sends a request a second per connection instead of as fast as 429s can be written, which costs
every other request on the process its share of the event loop.
"""
import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from service.core.declarations import PerApplication, email_key
from service.core.kernel import TooManyRequests
from storage import Counters, Hit

if TYPE_CHECKING:
    from service.core.declarations import Restify

COUNTERS = "throttles"
REFUSAL_PAUSE = 1.0  # seconds an attempt under a key over its limit waits for its 429 (at most until the window ends)


@dataclass
class Attempt:
    """What one request counted: (key, hit) pairs, to be taken back or cleared later."""

    hits: list[tuple[str, Hit]] = field(default_factory=list)


class Blocked:
    """Keys this process saw go over their limit, until their window ends.

    A further attempt under such a key is refused without asking the database: within a window a
    count only grows (a success clears it, and no attempt under a blocked key gets as far as a
    success). So a storm against one account or from one address costs one lookup in memory per
    request, not a database write. A success seen here forgets its key at once; one on another
    process is learnt when this window ends."""

    MAX_KEYS = 10_000  # past it, ended windows are dropped, then everything (the database still counts)

    def __init__(self) -> None:
        self._ends: dict[str, int] = {}

    def retry_after(self, key: str) -> int | None:
        ends = self._ends.get(key)
        if ends is None:
            return None
        left = ends - time.time()
        if left <= 0:
            del self._ends[key]
            return None
        return int(left) + 1

    def add(self, key: str, ends: int) -> None:
        if len(self._ends) >= self.MAX_KEYS:
            now = time.time()
            self._ends = {k: e for k, e in self._ends.items() if e > now}
            if len(self._ends) >= self.MAX_KEYS:
                self._ends.clear()
        self._ends[key] = ends

    def forget(self, key: str) -> None:
        self._ends.pop(key, None)


blocked = PerApplication(Blocked)


def _counters(app: "Restify") -> Counters:
    return app.db.counters(COUNTERS)


def _limit(app: "Restify", setting: str, section: str = "auth") -> int | None:
    """An attempt limit; None (0, empty, not a number): not limited."""
    return app.settings.cap(section, setting)


def _account_key(email: str) -> str:
    # One account, one key, however its address is spelled (as the `email` rule stores it); cut to the
    # longest real address: a megabyte "email" must not become a megabyte key.
    return f"account:{email_key(email)[:320]}"


async def _count(app: "Restify", keys: list[tuple[str, str]], window_setting: str, section: str = "auth") -> Attempt:
    """Counts the attempt under every limited key; TooManyRequests when any is over its limit."""
    window = int(app.settings.positive(section, window_setting))
    attempt, refused, known = Attempt(), [], blocked(app)
    limited = [(limit, key) for limit, key in ((_limit(app, setting, section), key) for setting, key in keys)
               if limit is not None]  # 0 or unset: this key is not limited, and not counted
    waits = [wait for wait in (known.retry_after(key) for _, key in limited) if wait is not None]
    if waits:
        await asyncio.sleep(min(REFUSAL_PAUSE, max(waits)))
        raise TooManyRequests(retry_after=max(waits))
    for limit, key in limited:
        hit = await _counters(app).hit(key, window)
        attempt.hits.append((key, hit))
        if hit.count > limit:
            known.add(key, hit.ends)
            refused.append(hit.seconds_left())
    if refused:
        raise TooManyRequests(retry_after=max(refused))
    return attempt


async def login_attempt(app: "Restify", email: str, address: str | None) -> Attempt:
    keys = [("login_attempts_per_account", _account_key(email))]
    if address:
        keys.append(("login_attempts_per_address", f"login:{address}"))
    return await _count(app, keys, "login_window_seconds")


async def registration_attempt(app: "Restify", address: str | None) -> Attempt:
    if not address:
        return Attempt()
    return await _count(app, [("registrations_per_address", f"register:{address}")],
                        "registration_window_seconds")


async def client_registration_attempt(app: "Restify", address: str | None) -> Attempt:
    """OAuth dynamic client registration, per client address (`oauth.registrations_per_address`)."""
    if not address:
        return Attempt()
    return await _count(app, [("registrations_per_address", f"oauth-client:{address}")],
                        "registration_window_seconds", "oauth")


async def login_succeeded(app: "Restify", attempt: Attempt) -> None:
    """The account's failures are cleared (as Laravel does); the address only gets this
    attempt's own count back, so logging into one's own account between guesses at others
    buys no extra guesses."""
    for key, hit in attempt.hits:
        if key.startswith("account:"):
            blocked(app).forget(key)
            await _counters(app).clear(key)
        else:
            await _counters(app).take_back(hit)


async def take_back(app: "Restify", attempt: Attempt) -> None:
    """An attempt that was never judged (the hashing lane was full) costs the client nothing."""
    for _, hit in attempt.hits:
        await _counters(app).take_back(hit)


async def password_matches(app: "Restify", email: str, address: str | None, hashed: str | None,
                           password: str) -> bool:
    """A password check that counts as a login attempt: counted first (429 past a limit), then
    checked in the hashing lane. Login and the `current_password` rule both go through here, so a
    stolen token cannot guess its owner's password faster than a login form could."""
    return await judge_password(app, await login_attempt(app, email, address), hashed, password)


async def judge_password(app: "Restify", attempt: Attempt, hashed: str | None, password: str) -> bool:
    """Checks the password of an attempt already counted, and settles the counts by the outcome."""
    try:
        accepted = await app.passwords.verify(hashed, password)
    except TooManyRequests:  # the hashing lane is full: the password was never checked
        await take_back(app, attempt)
        raise
    if accepted:
        await login_succeeded(app, attempt)
    return accepted


async def reset_attempt(app: "Restify", email: str, address: str | None) -> Attempt:
    """A `forgot-password` request, counted per address asked about (known or not alike) and per client."""
    keys = [("resets_per_account", f"reset:{_account_key(email)}")]
    if address:
        keys.append(("resets_per_address", f"reset:{address}"))
    return await _count(app, keys, "mail_window_seconds")


async def resend_attempt(app: "Restify", user_id: str) -> Attempt:
    """A user asking for their verification mail again."""
    return await _count(app, [("resends_per_account", f"resend:{user_id}")], "mail_window_seconds")
