"""Builds a running core for a command: settings, repositories, and a database
(the embedded server when MONGODB_URI is unset)."""
from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path

from service.config import Settings, load_settings
from service.core.app import Restify
from service.core.registry import load_app
from storage import Database, EmbeddedServer, connect, database_name


@contextmanager
def database_uri(settings: Settings) -> Iterator[str]:
    """The configured MongoDB URI, or an embedded server's for as long as the block runs."""
    if settings.mongodb_uri:
        yield settings.mongodb_uri
        return
    data_dir = settings.app_dir / settings.get("database", "embedded_dir")
    server = EmbeddedServer(data_dir).start()
    try:
        yield server.uri
    finally:
        server.stop()


def build(settings: Settings, uri: str, timeout_ms: int | None = None) -> Restify:
    """`timeout_ms` replaces `database.timeout_ms` for commands whose calls are not requests."""
    registry = load_app(settings.app_dir, settings.get("app", "package"))
    # The URI's own database wins: `database.name` only names one for a URI without it.
    db: Database = connect(uri, database_name(uri, settings.get("database", "name")),
                           timeout_ms=timeout_ms or int(settings.get("database", "timeout_ms") or 2000))
    return Restify(settings, registry, db)


def settings_for(app_dir: str | Path) -> Settings:
    return load_settings(Path(app_dir))
