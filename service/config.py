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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, dict[str, Any]] = {
    "server": {"host": "127.0.0.1", "port": 8000, "prefix": "/api/restify", "auth_prefix": "/api",
               "max_body_bytes": 1_048_576, "max_upload_bytes": 8_388_608, "max_query_bytes": 8192,
               # the largest answer, counted while it is built (over it: a 400 RESPONSE_TOO_LARGE)
               "max_response_bytes": 8_388_608,
               "trust_proxy_headers": False,
               # seconds: a quiet kept-alive connection; a request's header; its body; an answer's
               # client taking nothing (a chunk of a large answer, or a whole small one)
               "idle_timeout": 60, "header_timeout": 10, "body_timeout": 60, "write_timeout": 30,
               # bytes of large answers waiting to be sent, all connections of a process together
               "max_pending_bytes": 268_435_456},
    "cors": {"allowed_origins": [], "allowed_headers": ["Authorization", "Content-Type"], "max_age": 600},
    # stale_after_seconds: temporary or unreferenced files younger than this may belong to an upload
    # under way; clean-up (serve at start, storage:prune) leaves them alone.
    "files": {"disk": "local", "root": "var/storage", "max_bytes": 2_097_152, "url_prefix": "/storage",
              "stale_after_seconds": 3600},
    # profile: whose query shapes storage/ sends, "auto" (the server's own), "mongodb" or
    # "embedded" (to any server; see storage/indexes.py).
    "database": {"uri": "", "name": "restify", "embedded_dir": "var/db", "timeout_ms": 2000,
                 "auto_indexes": True, "profile": "auto"},
    "pagination": {"per_page": 15, "relatable_per_page": 15, "max_per_page": None},
    "routes": {"middleware": []},
    "auth": {"user_repository": "users", "argon2_time_cost": 3, "argon2_memory_kib": 65536,
             "token_ttl": None, "login_attempts_per_account": 5, "login_attempts_per_address": 20,
             "login_window_seconds": 60, "registrations_per_address": 10, "registration_window_seconds": 3600,
             "hash_threads": 2, "hash_queue": 64},
    "app": {"package": "repositories"},
    # /metrics (Prometheus); with a token it needs `Authorization: Bearer <token>`.
    "metrics": {"enabled": True, "token": ""},
    # The API explorer: Swagger UI at /docs and GraphiQL for browsers at /graphql (see the README's
    # "API explorer"); false: /docs is a 404 and /graphql answers browsers as it answers API clients.
    "explorer": {"enabled": True},
    # format: "text" | "json"; access: which requests get an access line, "errors" (4xx/5xx) | "all" | "none".
    "log": {"format": "text", "access": "errors"},
    # cursor_secret: what index cursors are sealed with; "" makes one per app directory (var/cursor.key).
    # max_in_values: the most values one in/nin filter may list (0 or null: no cap). Expensive queries
    # (service/core/reading/admission.py) take turns: one at a time per user (guests: per address), at most
    # expensive_concurrency at once per process (null: the number of CPU cores).
    "query": {"max_search_length": 255, "max_related_depth": 3, "max_related_rows": None, "cursor_secret": "",
              "max_relation_sort": 10_000, "max_in_values": 1000, "expensive_concurrency": None},
    # Attach, detach and sync: the most ids one request may name.
    "attach": {"max_ids": 1000},
    # GraphQL work is bounded by the document's size before any of it runs (depth and cost limits,
    # which need the schema, are in graphql.toml [schema]).
    "graphql": {"max_query_bytes": 16_384, "max_tokens": 2000, "max_selections": 1000},
    # Live changes (SSE and GraphQL subscriptions): see the README's "Live changes".
    "live": {"heartbeat_seconds": 15, "max_per_user": 10, "max_per_connection": 20, "max_queue": 100,
             "max_sent_ids": 10_000, "max_catch_up": 1000, "idle_ms": 50, "ticket_seconds": 60,
             "pre_images": False},
    # Actions (service/core/operations/actions.py): the most records one run may select ("all" or a list of ids).
    "actions": {"max_records": 10_000},
    # Bulk store/update/delete: the most records one request may write (more: a 422), and the age after
    # which an unfinished one (its process died mid-write) is taken back; see the README's "Bulk writes".
    "bulk": {"max_items": 100, "recover_after_seconds": 60},
    # MCP at /mcp: the Host/Origin headers accepted (DNS-rebinding protection); "host:*" allows any
    # port, and "*" in allowed_hosts turns the check off (for a proxy that checks hosts itself).
    "mcp": {"allowed_hosts": ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
            "allowed_origins": ["http://127.0.0.1", "http://127.0.0.1:*", "http://localhost",
                                "http://localhost:*", "http://[::1]", "http://[::1]:*"],
            # Guardrails for agents: preview-then-confirm before a destructive tool runs, no write tools
            # at all, and the largest tool result (text bytes; 0 or null: no cap).
            "confirm_destructive": True, "read_only": False, "max_result_bytes": 100_000},
}


class Settings:
    def __init__(self, values: Mapping[str, Mapping[str, Any]] | None = None, app_dir: str | Path = ".") -> None:
        self.app_dir = Path(app_dir).resolve()
        self.values: dict[str, dict[str, Any]] = copy.deepcopy(DEFAULTS)
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
        found = _number(self.get(section, key))
        return _default(section, key) if found is None or found <= 0 else found

    def set(self, section: str, key: str, value: Any) -> None:
        self.values.setdefault(section, {})[key] = value

    def cap(self, section: str, key: str) -> int | None:
        """An optional limit; null, 0, "", negative or non-numeric means no cap."""
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
        return "auth:token" in self.value("routes", "middleware")

    @property
    def mongodb_uri(self) -> str:
        return self.value("database", "uri")


_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _default(section: str, key: str) -> Any:
    return copy.deepcopy(DEFAULTS.get(section, {}).get(key))


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
