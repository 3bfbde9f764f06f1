"""The REST door's routes (auth, profile, files, repositories), each named by its template."""
import re

from service.core.declarations.app import Restify
from service.http import accounts, actions
from service.http import attaching
from service.http.bulk import BulkDeleteHandler, BulkStoreHandler, BulkUpdateHandler
from service.http.files import FileHandler
from service.http.tokens import TokenHandler, TokensHandler
from service.http.handlers import (
    AggregateHandler, CollectionHandler, CollectionUploadHandler, LoginHandler, LogoutHandler, ProfileHandler,
    ProfileUploadHandler,
    RecordHandler, RecordUploadHandler, RegisterHandler, RestoreHandler,
)

# `{name}` matches one path segment; `{path}` the rest of the path, slashes included.
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _pattern(template: str) -> str:
    """`/api/restify/{resource}/{id}` -> `/api/restify/([^/]+)/([^/]+)`."""
    parts = _PLACEHOLDER.split(template)  # literal, name, literal, name, ..., literal
    return "".join(re.escape(part) if i % 2 == 0 else "(.+)" if part == "path" else "([^/]+)"
                   for i, part in enumerate(parts))


def rest_routes(app: Restify) -> list[tuple]:
    """Rules named by their route template, which metrics and access lines show instead of the path."""
    prefix = app.settings.get("server", "prefix").rstrip("/")
    auth_prefix = app.settings.get("server", "auth_prefix").rstrip("/")
    files = app.settings.get("files", "url_prefix").rstrip("/")
    state = {"app": app}
    before_record, after_record = actions.routes(prefix)
    templates = [
        (f"{auth_prefix}/register", RegisterHandler),
        (f"{auth_prefix}/login", LoginHandler),
        (f"{auth_prefix}/logout", LogoutHandler),
        (f"{auth_prefix}/tokens", TokensHandler),
        (f"{auth_prefix}/tokens/{{id}}", TokenHandler),
        *accounts.routes(auth_prefix),
        (f"{prefix}/profile", ProfileHandler),
        (f"{prefix}/profile/upload", ProfileUploadHandler),
        (f"{files}/{{path}}", FileHandler),
        (f"{prefix}/{{resource}}", CollectionHandler),
        # Before the record route, which would take `upload` for an id.
        (f"{prefix}/{{resource}}/upload", CollectionUploadHandler),
        (f"{prefix}/{{resource}}/aggregate", AggregateHandler),
        (f"{prefix}/{{resource}}/bulk", BulkStoreHandler),
        (f"{prefix}/{{resource}}/bulk/update", BulkUpdateHandler),
        (f"{prefix}/{{resource}}/bulk/delete", BulkDeleteHandler),
        *((f"{prefix}/{{resource}}/{{id}}/{operation}/{{relation}}", handler)
          for operation, handler in attaching.HANDLERS.items()),
        *before_record,  # actions and getters: `actions`, `getters` are not ids either
        (f"{prefix}/{{resource}}/{{id}}", RecordHandler),
        (f"{prefix}/{{resource}}/{{id}}/upload", RecordUploadHandler),
        (f"{prefix}/{{resource}}/{{id}}/restore", RestoreHandler),
        *after_record,
    ]
    return [(_pattern(template), handler, state, template) for template, handler in templates]
