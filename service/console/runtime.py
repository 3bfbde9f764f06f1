"""Builds a running core for a command: settings, repositories, and a database
(the embedded server when MONGODB_URI is unset)."""
import traceback
from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path

from service.config import Settings, load_settings
from service.core.declarations.app import Restify
from service.core.declarations.registry import Registry, load_app
from service.core.kernel.errors import NotAnApplication
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


class ApplicationError(Exception):
    """The application itself is broken or missing; the message is `file:line: error` (or a hint)."""


def located_error(error: BaseException, app_dir: Path) -> str:
    """`file:line: message` for an error in the application's modules, as editors understand."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}: SyntaxError: {error.msg}"
    location = getattr(error, "location", None)
    if location:
        return f"{location[0]}:{location[1]}: {type(error).__name__}: {error}"
    app_frames: list = []
    cause: BaseException | None = error
    while cause is not None and not app_frames:  # e.g. a DeclarationError raised from the author's exception
        app_frames = [f for f in traceback.extract_tb(cause.__traceback__)
                      if Path(f.filename).resolve().is_relative_to(app_dir) and "/service/" not in f.filename]
        cause = cause.__cause__
    where = f"{app_frames[-1].filename}:{app_frames[-1].lineno}: " if app_frames else ""
    return f"{where}{type(error).__name__}: {error}"


def load_registry(settings: Settings) -> Registry:
    """The application's registry; whatever its modules raise becomes one located ApplicationError."""
    try:
        return load_app(settings.app_dir, settings.get("app", "package"))
    except NotAnApplication as error:
        raise ApplicationError(f"restify: {error}") from error
    except Exception as error:  # the modules are the author's code: any error is theirs to fix
        raise ApplicationError(located_error(error, settings.app_dir)) from error


def build(settings: Settings, uri: str, timeout_ms: int | None = None) -> Restify:
    """`timeout_ms` replaces `database.timeout_ms` for commands whose calls are not requests."""
    registry = load_registry(settings)
    # The URI's own database wins: `database.name` only names one for a URI without it.
    db: Database = connect(uri, database_name(uri, settings.get("database", "name")),
                           timeout_ms=timeout_ms or int(settings.positive("database", "timeout_ms")),
                           profile=str(settings.value("database", "profile")))
    return Restify(settings, registry, db)


def settings_for(app_dir: str | Path) -> Settings:
    return load_settings(Path(app_dir))
