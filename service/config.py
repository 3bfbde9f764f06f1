"""Settings: defaults, then `restify.toml` in the app directory, then the environment.

Environment variables win: `PORT`, `MONGODB_URI`, and `RESTIFY_<SECTION>_<KEY>`
(e.g. `RESTIFY_PAGINATION_MAX_PER_PAGE=50`); values are read as TOML literals
when they parse as one (numbers, booleans, arrays) and as plain strings otherwise.
"""
import copy
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, dict[str, Any]] = {
    "server": {"port": 8000, "prefix": "/api/restify", "auth_prefix": "/api", "max_body_bytes": 1_048_576,
               "max_upload_bytes": 8_388_608, "max_query_bytes": 8192, "trust_proxy_headers": False},
    "cors": {"allowed_origins": [], "allowed_headers": ["Authorization", "Content-Type"], "max_age": 600},
    "files": {"disk": "local", "root": "var/storage", "max_bytes": 2_097_152, "url_prefix": "/storage"},
    "database": {"uri": "", "name": "restify", "embedded_dir": "var/db", "timeout_ms": 2000},
    "pagination": {"per_page": 15, "relatable_per_page": 15, "max_per_page": None},
    "routes": {"middleware": []},
    "auth": {"user_repository": "users", "argon2_time_cost": 3, "argon2_memory_kib": 65536,
             "token_ttl": None, "login_attempts_per_account": 5, "login_attempts_per_address": 20,
             "login_window_seconds": 60},
    "app": {"package": "repositories"},
    "query": {"max_search_length": 255, "max_related_depth": 3},
    # Live changes (SSE and GraphQL subscriptions): see the README's "Live changes".
    "live": {"heartbeat_seconds": 15, "max_per_user": 10, "max_per_connection": 20, "max_queue": 100,
             "max_sent_ids": 10_000, "max_catch_up": 1000, "idle_ms": 50, "ticket_seconds": 60,
             "pre_images": False},
    # MCP at /mcp: the Host/Origin headers accepted (DNS-rebinding protection); "host:*" allows any
    # port, and "*" in allowed_hosts turns the check off (for a proxy that checks hosts itself).
    "mcp": {"allowed_hosts": ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
            "allowed_origins": ["http://127.0.0.1", "http://127.0.0.1:*", "http://localhost",
                                "http://localhost:*", "http://[::1]", "http://[::1]:*"]},
}


class Settings:
    def __init__(self, values: Mapping[str, Mapping[str, Any]] | None = None, app_dir: str | Path = ".") -> None:
        self.app_dir = Path(app_dir).resolve()
        self.values: dict[str, dict[str, Any]] = copy.deepcopy(DEFAULTS)
        for section, items in (values or {}).items():
            self.values.setdefault(section, {}).update(items)

    def get(self, section: str, key: str, default: Any = None) -> Any:
        return self.values.get(section, {}).get(key, default)

    def set(self, section: str, key: str, value: Any) -> None:
        self.values.setdefault(section, {})[key] = value

    @property
    def max_per_page(self) -> int | None:
        """The cap on page sizes; null, 0, "", negative or non-numeric means no cap."""
        raw = self.get("pagination", "max_per_page")
        if isinstance(raw, bool):
            return None
        try:
            cap = int(str(raw).strip()) if raw is not None else 0
        except ValueError:
            return None
        return cap if cap > 0 else None

    @property
    def requires_user(self) -> bool:
        return "auth:token" in (self.get("routes", "middleware") or [])

    @property
    def mongodb_uri(self) -> str:
        return self.get("database", "uri") or ""


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
    if environ.get("PORT"):
        settings.set("server", "port", int(environ["PORT"]))
    if environ.get("MONGODB_URI"):
        settings.set("database", "uri", environ["MONGODB_URI"])
    for section, items in (overrides or {}).items():
        for key, value in items.items():
            settings.set(section, key, value)
    return settings
