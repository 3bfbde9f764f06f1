"""Settings: defaults, then `restify.toml` in the app directory, then the environment.

Environment variables win: `HOST`, `PORT`, `MONGODB_URI`, and `RESTIFY_<SECTION>_<KEY>`
(e.g. `RESTIFY_PAGINATION_MAX_PER_PAGE=50`); values are read as TOML literals
when they parse as one (numbers, booleans, arrays) and as plain strings otherwise.
"""
import copy
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# Every setting and its default; what each one means is in MEANINGS below, and docs/configuration.md is
# generated from both (python docs/gen_config.py; a test fails when the page or a meaning is missing).
DEFAULTS: dict[str, dict[str, Any]] = {
    "server": {"host": "127.0.0.1", "port": 8000, "prefix": "/api/restify", "auth_prefix": "/api",
               "max_body_bytes": 1_048_576, "max_upload_bytes": 8_388_608, "max_query_bytes": 8192,
               "max_response_bytes": 8_388_608, "trust_proxy_headers": False,
               "idle_timeout": 60, "header_timeout": 10, "body_timeout": 60, "write_timeout": 30,
               "max_pending_bytes": 268_435_456, "base_url": ""},
    "cors": {"allowed_origins": [], "allowed_headers": ["Authorization", "Content-Type"], "max_age": 600},
    "files": {"disk": "local", "root": "var/storage", "max_bytes": 2_097_152, "url_prefix": "/storage",
              "stale_after_seconds": 3600},
    "database": {"uri": "", "name": "restify", "embedded_dir": "var/db", "timeout_ms": 2000,
                 "auto_indexes": True, "profile": "auto"},
    "pagination": {"per_page": 15, "relatable_per_page": 15, "max_per_page": None},
    "routes": {"middleware": []},
    "auth": {"user_repository": "users", "argon2_time_cost": 3, "argon2_memory_kib": 65536,
             "token_ttl": None, "login_abilities": ["*"], "login_attempts_per_account": 5,
             "login_attempts_per_address": 20,
             "login_window_seconds": 60, "registrations_per_address": 10, "registration_window_seconds": 3600,
             "reset_ttl": 60, "resets_per_account": 3, "resets_per_address": 20, "resends_per_account": 6,
             "mail_window_seconds": 3600, "reset_url": "", "verify_email": False, "require_verified": False,
             "verify_ttl": 60, "signing_secret": "",
             "hash_threads": None, "hash_queue": 64, "identity_cache_size": 10_000, "identity_ttl": 1},
    "mail": {"url": "log", "from": "Restify <noreply@localhost>", "starttls": "auto", "timeout": 10,
             "retry_seconds": 5, "give_up_after_seconds": 86_400, "poll_seconds": 5, "lease_seconds": 30},
    "webhooks": {"timeout_seconds": 10, "retry_seconds": 2, "retry_for": 86_400, "poll_seconds": 1,
                 "lease_seconds": 30, "keep_sent_seconds": 604_800},
    "app": {"package": "repositories"},
    "metrics": {"enabled": True, "token": ""},
    "explorer": {"enabled": True},
    "openapi": {"title": "Restify API", "license": "LicenseRef-Proprietary", "license_url": ""},
    "log": {"format": "text", "access": "errors"},
    "query": {"max_search_length": 255, "max_related_depth": 3, "max_related_rows": None, "cursor_secret": "",
              "max_relation_sort": 10_000, "max_in_values": 1000, "expensive_concurrency": None,
              "expensive_rest": 1.0, "expensive_share": 0.25, "expensive_count_seconds": 5,
              "estimated_count_seconds": 1},
    "attach": {"max_ids": 1000},
    "aggregate": {"max_groups": 1000},
    "graphql": {"max_query_bytes": 16_384, "max_tokens": 2000, "max_selections": 1000},
    "live": {"heartbeat_seconds": 15, "max_per_user": 10, "max_per_connection": 20, "max_queue": 100,
             "max_sent_ids": 10_000, "max_catch_up": 1000, "idle_ms": 50, "ticket_seconds": 60,
             "pre_images": False},
    "actions": {"max_records": 10_000},
    "bulk": {"max_items": 100, "recover_after_seconds": 60},
    "throttle": {"writes_per_minute": 300, "write_burst": 100},
    "mcp": {"allowed_hosts": ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
            "allowed_origins": ["http://127.0.0.1", "http://127.0.0.1:*", "http://localhost",
                                "http://localhost:*", "http://[::1]", "http://[::1]:*"],
            "confirm_destructive": True, "read_only": False, "max_result_bytes": 100_000, "auth": ""},
    "oauth": {"access_ttl": 3600, "refresh_ttl": 2_592_000, "code_ttl": 60, "registrations_per_address": 20,
              "registration_window_seconds": 3600, "metadata_timeout": 5, "metadata_max_bytes": 5120,
              "metadata_cache_seconds": 300, "private_hosts": []},
}

# What each setting means, one line each (Markdown), "section.key" -> text. "No cap" settings read null,
# 0, "" or a negative number as no limit (Settings.cap).
MEANINGS: dict[str, str] = {
    "server.host": "the address `serve` listens on (`HOST`, `--host`); `0.0.0.0` for every interface, as the "
                   "Procfile's web process",
    "server.base_url": "the service's public address (`https://api.example.com`): the OAuth issuer and the "
                       "resource `/mcp` names; empty: the address each request came to (development)",
    "server.port": "the port `serve` listens on (`PORT`, `--port`)",
    "server.prefix": "the prefix of the repository routes",
    "server.auth_prefix": "the prefix of register, login and logout",
    "server.max_body_bytes": "the largest JSON body; above it a 413",
    "server.max_upload_bytes": "the largest multipart body; above it a 413",
    "server.max_query_bytes": "the longest query string; above it a 414",
    "server.max_response_bytes": "the largest answer, counted while it is built; over it a 400 "
                                 "`RESPONSE_TOO_LARGE`; no cap when null, 0, \"\" or negative",
    "server.trust_proxy_headers": "believe `X-Forwarded-For` / `X-Real-Ip` for the client address (login "
                                  "throttling); only behind a proxy that sets them",
    "server.idle_timeout": "seconds a kept-alive connection may stay quiet; then it is closed",
    "server.header_timeout": "seconds a request's header may take from its first byte (of the accept, on a new "
                             "connection); then the connection is closed",
    "server.body_timeout": "seconds a request's body may take after its header; then the connection is closed",
    "server.write_timeout": "seconds a client may take nothing of an answer (a whole small one, or one 64 KiB "
                            "chunk of a larger one); then the connection is closed and the rest dropped",
    "server.max_pending_bytes": "bytes of answers over 64 KiB accepted for writing and not yet sent, all "
                                "connections of a process together; a large answer finding no room within a "
                                "second is a 503 with `Retry-After`; null or 0: no cap",
    "cors.allowed_origins": "origins allowed by CORS (`[\"*\"]` for any); empty: CORS off",
    "cors.allowed_headers": "request headers a CORS preflight allows",
    "cors.max_age": "seconds a browser may cache a CORS preflight answer",
    "files.disk": "where uploads go: `local` (under `files.root`) or `gridfs` (shared by every process); a "
                  "field's `.disk()` wins",
    "files.root": "the directory of the local disk",
    "files.max_bytes": "the largest image one field takes",
    "files.url_prefix": "where stored files are served",
    "files.stale_after_seconds": "age past which a temporary or unreferenced file counts as left by a crash "
                                 "(`serve` at start, `storage:prune`); younger ones may belong to an upload "
                                 "under way",
    "database.uri": "the MongoDB to use (`MONGODB_URI`); empty: an embedded server under "
                    "`database.embedded_dir`",
    "database.name": "the database when the URI names none (`MONGODB_URI=mongodb://host/mydb` uses `mydb`)",
    "database.embedded_dir": "where the embedded server keeps its data when `MONGODB_URI` is unset",
    "database.timeout_ms": "bound on every database call of the request path (pymongo's `timeoutMS`); past it "
                           "a 503",
    "database.auto_indexes": "`serve` makes each repository's index plan at start; false: only the unique "
                             "indexes `unique:` rules rely on ([Indexes](querying.md#indexes))",
    "database.profile": "whose query shapes `storage/` sends: `auto` the answering server's own, `mongodb` or "
                        "`embedded` to any server ([Query shapes](querying.md#query-shapes))",
    "pagination.per_page": "the page size when a request and its repository name none",
    "pagination.relatable_per_page": "the cap on each to-many relation of a shown record (`relatablePerPage`)",
    "pagination.max_per_page": "clamps `perPage`, `relatablePerPage` and repository defaults; null, 0, \"\", "
                               "negative or non-numeric: no cap",
    "routes.middleware": "`[\"auth:token\"]` makes every repository route require a user",
    "auth.user_repository": "the repository used for register, login and the profile",
    "auth.argon2_time_cost": "argon2id time cost of password hashes",
    "auth.argon2_memory_kib": "argon2id memory cost of password hashes, in KiB",
    "auth.token_ttl": "seconds a token lives; none: until logout or `restify token:revoke`",
    "auth.identity_cache_size": "tokens each process remembers who they are (least recently used out first); 0: "
                                "read the token and its user on every request",
    "auth.identity_ttl": "seconds a process trusts who a token is without change streams to tell it of a "
                         "revocation, password change or deleted user (a standalone MongoDB)",
    "auth.login_abilities": "the abilities of tokens made by login and register (`[\"*\"]`: everything the user may "
                            "do; e.g. `[\"posts:read\"]`); see [Tokens and abilities](tokens.md)",
    "auth.login_attempts_per_account": "login attempts per account per window, counted before the password "
                                       "is checked; then 429 (0: off)",
    "auth.login_attempts_per_address": "login attempts per client address per window; then 429 (0: off)",
    "auth.login_window_seconds": "the length of the login throttle's window",
    "auth.registrations_per_address": "registrations per client address per window, every attempt counted; "
                                      "then 429 (0: off)",
    "auth.registration_window_seconds": "the length of the registration throttle's window",
    "auth.hash_threads": "threads of the password hashing lane (null: half the CPU cores, at least 1, so that "
                         "a burst of logins leaves the other half to every other request); the processes of one "
                         "`serve --processes N` share them, hashing on as many cores together as one would",
    "auth.hash_queue": "hashing jobs that may wait beyond those threads; past them a 429",
    "auth.reset_ttl": "minutes a password reset token is valid",
    "auth.resets_per_account": "`forgot-password` requests per email address per `auth.mail_window_seconds`, "
                               "counted alike for unknown addresses; then 429 (0: off)",
    "auth.resets_per_address": "`forgot-password` requests per client address per window; then 429 (0: off)",
    "auth.resends_per_account": "verification mails one user may ask for again per window; then 429 (0: off)",
    "auth.mail_window_seconds": "the length of the window of the reset and verification throttles",
    "auth.reset_url": "the link of the reset mail, with `{token}` and `{email}` (e.g. your front end's page); "
                      "empty: `<request's host><auth_prefix>/reset-password?token=...&email=...`",
    "auth.verify_email": "send a signed link to confirm the address on registration and on each change of it",
    "auth.require_verified": "refuse writes (403 `EMAIL_NOT_VERIFIED`) by users whose address is not confirmed",
    "auth.verify_ttl": "minutes a verification link is valid",
    "auth.signing_secret": "the secret verification links are signed with (HMAC-SHA256); empty: derived from "
                           "`query.cursor_secret` (or `var/cursor.key`); give hosts behind one load balancer the "
                           "same value",
    "mail.url": "how mail leaves: `log` (written to `var/mail/*.eml` and the log), `smtp://user:pass@host:port` "
                "(STARTTLS when offered) or `smtps://user:pass@host:port` ([Mail](accounts.md#mail))",
    "mail.from": "the `From` of every message",
    "mail.starttls": "`auto`: STARTTLS when the SMTP server offers it; `required`: no message is sent in clear",
    "mail.timeout": "seconds one SMTP conversation may take; then the attempt failed",
    "mail.retry_seconds": "the wait after a message's first failed attempt; it doubles with each, at most a "
                          "minute during the message's first hour, 15 minutes afterwards",
    "mail.give_up_after_seconds": "age past which a message that still cannot be sent is marked failed (kept; "
                                  "`restify mail:failed` lists it)",
    "mail.poll_seconds": "how often `serve` looks for mail to send (a message queued by the same process is "
                         "sent at once)",
    "mail.lease_seconds": "how long the sender's lease lasts unless renewed: when a sending process dies, "
                          "another takes over after it",
    "webhooks.timeout_seconds": "seconds a receiver has to answer a delivery; then the attempt failed",
    "webhooks.retry_seconds": "the wait after a delivery's first failed attempt; it doubles with each, at most a "
                              "minute during its first hour, 15 minutes afterwards",
    "webhooks.retry_for": "seconds a delivery is retried; then it is failed (kept; `restify webhooks:failed` "
                          "lists it, `restify webhooks:replay` sends it again)",
    "webhooks.poll_seconds": "how often `serve` reads the changes of each webhook and sends what is due",
    "webhooks.lease_seconds": "how long a webhook's sender holds its lease unless renewed: when the sending "
                              "process dies, another takes over after it",
    "webhooks.keep_sent_seconds": "seconds a sent delivery is kept (each record's latest stays whatever its "
                                  "age: it numbers the next); 0 or null: kept for good",
    "app.package": "the package the application is loaded from",
    "explorer.enabled": "the API explorer: Swagger UI at `/docs` and GraphiQL for browsers at `/graphql` "
                        "([API explorer](explorer.md)); false: `/docs` is a 404 and `/graphql` answers browsers as "
                        "it answers API clients",
    "openapi.title": "the title of the OpenAPI document (`/openapi.json`, `restify openapi`)",
    "openapi.license": "the license the API is offered under, in the document's `info.license`: an SPDX "
                       "identifier such as `MIT` or `Apache-2.0`, or `LicenseRef-<name>` for terms of your own",
    "openapi.license_url": "where the license's text is; when set, the document links it instead of naming "
                           "the identifier",
    "metrics.enabled": "serve `/metrics` (Prometheus)",
    "metrics.token": "when set, a scrape needs `Authorization: Bearer <token>`",
    "log.format": "`text` or `json` lines; `restify serve --log-format` wins",
    "log.access": "which requests get an access line: `errors` (4xx/5xx), `all` or `none`",
    "query.max_search_length": "the longest `search` text, on every door",
    "query.max_related_depth": "the deepest relation path `related` may name",
    "query.max_related_rows": "related records one request may write (all relations and levels, each in every "
                              "place it is written); over it a 400; null, 0, \"\", negative or non-numeric: "
                              "no cap",
    "query.cursor_secret": "the secret index cursors are sealed with (an AES-256-GCM key is derived from it); "
                           "empty: the first process creates `var/cursor.key` in the app directory; give hosts "
                           "behind one load balancer the same value",
    "query.max_relation_sort": "records one relation search, relation sort or filter through a relation "
                               "(`user.name=`, `has=`) may read (within their scope); over it a 400",
    "query.max_in_values": "values one `in` / `nin` filter may list, on every door; over it a 400; 0 or null: "
                           "no cap",
    "aggregate.max_groups": "groups one aggregation may answer (`<r>/aggregate`, on every door); more: a 400 "
                            "naming the setting",
    "query.expensive_concurrency": "expensive queries one process runs at once (null: the number of CPU cores); "
                                   "each user (guest: address) runs one at a time; else 429 "
                                   "([Expensive queries](querying.md#expensive-queries-take-turns))",
    "query.expensive_rest": "after an expensive query that took T, its user (guest: address) rests T x this "
                            "before the next (0: no rest); a rest that ends within a second is waited out, a "
                            "longer one refuses with 429",
    "query.expensive_share": "the part of a process's time its expensive queries may take together: after one "
                             "that took T, the process rests T x (1 - share) / share (1: no bound); waited out "
                             "or 429, as for the user's rest",
    "query.expensive_count_seconds": "how long an expensive query's total (`meta.total`) is kept for the next "
                                     "pages and the same query, while this process writes nothing to its "
                                     "collection (writes by other processes are seen after it; 0: counted every "
                                     "time)",
    "query.estimated_count_seconds": "how long the total of a list without filters (the collection's estimated "
                                     "count, read from its metadata) is kept, while this process writes "
                                     "nothing to the collection (writes by other processes are seen after it; "
                                     "0: asked every time)",
    "attach.max_ids": "ids one attach, detach or sync may name; over it a 422",
    "graphql.max_query_bytes": "the largest GraphQL request body (413), or GET `query` parameter (414)",
    "graphql.max_tokens": "tokens a GraphQL document may have; over it a 400 (depth and cost limits are in "
                          "`graphql.toml` `[schema]`)",
    "graphql.max_selections": "selections a GraphQL document may make, through fragments and aliases; over it "
                              "a 400",
    "live.heartbeat_seconds": "seconds between the keep-alive comment lines of an event feed",
    "live.max_per_user": "feeds one user (guests: one address) may hold open per process; over it a 429",
    "live.max_per_connection": "subscriptions one GraphQL WebSocket may hold",
    "live.max_queue": "events waiting for a subscriber; past them it is dropped (`TOO_SLOW`)",
    "live.max_sent_ids": "ids remembered per view of a feed, to tell its subscribers of deletes without a pre-image",
    "live.max_catch_up": "changes replayed after `Last-Event-ID`; further behind, an `event: reset`",
    "live.idle_ms": "pause of a change-stream watcher between empty batches (the embedded server answers an "
                    "idle getMore at once); a write of the same process ends it",
    "live.ticket_seconds": "seconds a browser's single-use feed ticket is valid",
    "live.pre_images": "ask MongoDB 6.0+ for pre-images of updates and deletes: `serve` enables "
                       "`changeStreamPreAndPostImages` on the repositories' collections with their indexes",
    "actions.max_records": "records one action run may select (`\"all\"` or a list of ids); over it a 400 or "
                           "422; 0 or null: no cap",
    "bulk.max_items": "items one bulk write may hold; over it a 422; 0 or null: no cap",
    "bulk.recover_after_seconds": "age past which an unfinished bulk write's journal entry counts as left by a "
                                  "crash and is taken back (`serve` at start, then once a minute); must exceed "
                                  "the longest bulk write ([Bulk writes](writes.md#bulk-writes))",
    "throttle.writes_per_minute": "records each user (a guest: each client address) may write a minute in "
                                  "each process, on average; past it a write waits up to a second, then "
                                  "gets a 429 with `Retry-After` ([Security](security.md#writes-are-paced)); "
                                  "0 or null: no limit",
    "throttle.write_burst": "records a user may write at once before the pace applies (at least "
                            "`bulk.max_items`, so a bulk of the largest size always fits)",
    "mcp.allowed_hosts": "`Host` values accepted at `/mcp` (DNS-rebinding protection; `host:*` any port); "
                         "`\"*\"` turns the Host/Origin check off",
    "mcp.allowed_origins": "`Origin` values accepted at `/mcp` (requests without `Origin` always pass)",
    "mcp.confirm_destructive": "a destructive tool previews first and runs only with the `confirm` token of "
                               "that preview",
    "mcp.read_only": "no write tools: not listed, refused when called",
    "mcp.auth": "how `/mcp` clients sign in: `token` (a bearer token made by login or `POST <auth>/tokens`) or "
                "`oauth` (that, plus OAuth 2.1 discovery, sign-in and consent: see MCP); empty: `oauth` when "
                "`server.base_url` is a public HTTPS address, else `token`",
    "oauth.access_ttl": "seconds an OAuth access token is valid",
    "oauth.refresh_ttl": "seconds an OAuth grant (its refresh tokens) lasts after its last refresh",
    "oauth.code_ttl": "seconds an authorization code may wait for its exchange",
    "oauth.registrations_per_address": "dynamic client registrations a client address may make per window",
    "oauth.registration_window_seconds": "the window of `oauth.registrations_per_address`",
    "oauth.metadata_timeout": "seconds a client metadata document's fetch may take (redirects included)",
    "oauth.metadata_max_bytes": "the largest client metadata document; a larger one is refused",
    "oauth.metadata_cache_seconds": "seconds a fetched client metadata document is kept",
    "oauth.private_hosts": "host names (as a client metadata URL writes them) whose documents may be fetched "
                           "from loopback or private addresses and over plain HTTP: tests and development only "
                           "(`[\"localhost\"]`)",
    "mcp.max_result_bytes": "the largest tool result (UTF-8 bytes of its text); 0 or null: no cap",
}

class Settings:
    """The settings of one application. Change them with `set`: the numbers and caps read on every
    request are worked out once and remembered until then."""

    def __init__(self, values: Mapping[str, Mapping[str, Any]] | None = None, app_dir: str | Path = ".") -> None:
        self.app_dir = Path(app_dir).resolve()
        self.values: dict[str, dict[str, Any]] = copy.deepcopy(DEFAULTS)
        self._read: dict[tuple[str, str, str], Any] = {}  # (reading, section, key) -> what it read
        for section, items in (values or {}).items():
            self.values.setdefault(section, {}).update(items)

    def get(self, section: str, key: str, default: Any = None) -> Any:
        return self.values.get(section, {}).get(key, default)

    def value(self, section: str, key: str) -> Any:
        """The setting; one left empty (null or "") takes its default, the one in DEFAULTS."""
        raw = self.get(section, key)
        return _default(section, key) if raw is None or raw == "" else raw

    def number(self, section: str, key: str) -> int | float:
        """A numeric setting; one left empty or not a number takes its default (DEFAULTS)."""
        found = _number(self.get(section, key))
        return _default(section, key) if found is None else found

    def positive(self, section: str, key: str) -> int | float:
        """A size, count or time that must be above 0; one that is not (0, empty, not a number) takes its
        default (DEFAULTS)."""
        return self._remembered("positive", section, key, self._positive)

    def _positive(self, section: str, key: str) -> int | float:
        found = _number(self.get(section, key))
        return _default(section, key) if found is None or found <= 0 else found

    def non_negative(self, section: str, key: str) -> float:
        """A number that may be 0 (a time or a factor that turns something off); a negative one is 0, one left
        empty or not a number takes its default (DEFAULTS)."""
        return self._remembered("non_negative", section, key, lambda s, k: max(0.0, float(self.number(s, k))))

    def set(self, section: str, key: str, value: Any) -> None:
        self.values.setdefault(section, {})[key] = value
        self._read.clear()

    def cap(self, section: str, key: str) -> int | None:
        """An optional limit; null, 0, "", negative or non-numeric means no cap."""
        return self._remembered("cap", section, key, self._cap)

    def _remembered(self, reading: str, section: str, key: str, work: Callable[[str, str], Any]) -> Any:
        """What `work(section, key)` reads of a setting, worked out once until `set` changes the settings
        (these are read on every request: no closure is made for a reading already worked out)."""
        remembered = (reading, section, key)
        found = self._read.get(remembered, _UNREAD)
        if found is _UNREAD:
            found = self._read[remembered] = work(section, key)
        return found

    def _cap(self, section: str, key: str) -> int | None:
        raw = self.get(section, key)
        if isinstance(raw, bool):
            return None
        try:
            cap = int(str(raw).strip()) if raw is not None else 0
        except ValueError:
            return None
        return cap if cap > 0 else None

    @property
    def max_per_page(self) -> int | None:
        """The cap on page sizes."""
        return self.cap("pagination", "max_per_page")

    @property
    def max_related_rows(self) -> int | None:
        """The cap on related records one request may load (over it: a 400)."""
        return self.cap("query", "max_related_rows")

    @property
    def max_response_bytes(self) -> int | None:
        """The cap on the bytes of one answer (over it: a 400); null, 0, "" or negative: no cap."""
        return self.cap("server", "max_response_bytes")

    @property
    def requires_user(self) -> bool:
        return self._remembered("requires_user", "routes", "middleware",
                                lambda section, key: "auth:token" in self.value(section, key))

    @property
    def mongodb_uri(self) -> str:
        return self.value("database", "uri")


_UNREAD = object()  # a reading not worked out yet (None is a reading: no cap)
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _default(section: str, key: str) -> Any:
    found = DEFAULTS.get(section, {}).get(key)
    # A copy where a caller could change it: no caller may change the defaults.
    return copy.deepcopy(found) if isinstance(found, (dict, list, set)) else found


def _number(raw: Any) -> int | float | None:
    """`raw` as a number (a number, or text that reads as one); None for anything else."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        return _number(float(text)) if _FLOAT.match(text) else None


def _literal(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def load_settings(app_dir: str | Path = ".", environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Settings:
    environ = os.environ if environ is None else environ
    app_dir = Path(app_dir)
    settings = Settings(app_dir=app_dir)
    config_file = app_dir / "restify.toml"
    if config_file.is_file():
        with config_file.open("rb") as handle:
            for section, items in tomllib.load(handle).items():
                if isinstance(items, dict):
                    settings.values.setdefault(section, {}).update(items)
    for name, value in environ.items():
        if name.startswith("RESTIFY_") and name.count("_") >= 2:
            _, section, key = name.split("_", 2)
            settings.set(section.lower(), key.lower(), _literal(value))
    if environ.get("HOST"):
        settings.set("server", "host", environ["HOST"])
    if environ.get("PORT"):
        settings.set("server", "port", int(environ["PORT"]))
    if environ.get("MONGODB_URI"):
        settings.set("database", "uri", environ["MONGODB_URI"])
    for section, items in (overrides or {}).items():
        for key, value in items.items():
            settings.set(section, key, value)
    return settings
