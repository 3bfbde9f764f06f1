"""The Tornado application: routes for auth and repositories, JSON 404 for the rest."""
import re

from tornado.httpserver import HTTPServer
from tornado.web import Application

from service.core.app import Restify
from service.http.access import Observer
from service.http.base import NotFoundHandler
from service.http.connections import TimedHTTPServer
from service.http.events import events_routes
from service.http.handlers import (
    CollectionHandler, CollectionUploadHandler, LoginHandler, LogoutHandler, ProfileHandler, ProfileUploadHandler,
    RecordHandler, RecordUploadHandler, RegisterHandler,
)
from service.http.files import FileHandler
from service.http.health import ops_routes
from service.http.metrics import Metrics, enabled as metrics_enabled
from service.http.openapi import OpenApiHandler
from service.mcp import mcp_routes
from service.http.graphql import graphql_routes
from service.graphql.service import GraphQLService


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
    templates = [
        (f"{auth_prefix}/register", RegisterHandler),
        (f"{auth_prefix}/login", LoginHandler),
        (f"{auth_prefix}/logout", LogoutHandler),
        (f"{prefix}/profile", ProfileHandler),
        (f"{prefix}/profile/upload", ProfileUploadHandler),
        (f"{prefix}/openapi.json", OpenApiHandler),
        (f"{files}/{{path}}", FileHandler),
        (f"{prefix}/{{resource}}", CollectionHandler),
        # Before the record route, which would take `upload` for an id.
        (f"{prefix}/{{resource}}/upload", CollectionUploadHandler),
        (f"{prefix}/{{resource}}/{{id}}", RecordHandler),
        (f"{prefix}/{{resource}}/{{id}}/upload", RecordUploadHandler),
    ]
    return [(_pattern(template), handler, state, template) for template, handler in templates]


def _named(rules: list[tuple]) -> list[tuple]:
    """Names a rule without a name by its (literal) path, e.g. `/graphql`, `/mcp`."""
    return [rule if not isinstance(rule, tuple) or len(rule) == 4 else (*rule, rule[0]) for rule in rules]


def make_app(app: Restify, graphql: GraphQLService | None = None, **settings: object) -> Application:
    """The whole service; pass `graphql` to keep a handle for reloading its schema."""
    observer = Observer(Metrics() if metrics_enabled(app.settings) else None)
    application = Application(
        # Health first: a prefix of "/" must not turn /healthz into a repository name.
        # Events before the record routes, which would take `events` for an id.
        ops_routes(app, observer.metrics) + events_routes(app) + rest_routes(app)
        + _named(graphql_routes(app, graphql) + mcp_routes(app)),
        default_handler_class=NotFoundHandler,
        default_handler_args={"app": app},
        **{"log_function": observer, **settings},
    )
    observer.learn(application)
    return application


# Bodies are streamed by the handlers, which refuse what is over their own limits with a 413.
MAX_BODY = 64 * 1024 * 1024


def make_server(app: Restify, graphql: GraphQLService | None = None) -> HTTPServer:
    """The HTTP server `restify serve` runs. `X-Forwarded-For` / `X-Real-Ip` are believed only
    with `server.trust_proxy_headers`: a client could otherwise pick the address that login
    throttling counts against, and take a fresh one for each attempt."""
    trusted = app.settings.get("server", "trust_proxy_headers") is True
    seconds = {name: float(app.settings.get("server", name))
               for name in ("idle_timeout", "header_timeout", "body_timeout")}
    return TimedHTTPServer(make_app(app, graphql), xheaders=trusted, max_body_size=MAX_BODY, **seconds)
