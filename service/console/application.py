"""The whole service as one Tornado application: each door's routes, composed here at the top.

`service.http` is the shared plumbing and the REST door; GraphQL, MCP and OpenAPI bring their own
handlers. Every rule is named by its route template, which metrics and access lines show."""
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.web import Application

from service.core.declarations.app import Restify
from service.graphql.handler import graphql_routes
from service.graphql.service import GraphQLService
from service.http.access import Observer
from service.http.base import NotFoundHandler
from service.http.connections import TimedHTTPServer
from service.http.events import events_routes
from service.http.explorer import explorer_routes
from service.http.health import ops_routes
from service.http.metrics import Metrics, enabled as metrics_enabled
from service.http.oauth import oauth_routes
from service.http.routes import rest_routes
from service.http.routing import RoutedApplication
from service.mcp import mcp_routes
from service.openapi.handler import openapi_routes


def make_app(app: Restify, graphql: GraphQLService | None = None, **settings: Any) -> Application:
    """The whole service; pass `graphql` to keep a handle for reloading its schema."""
    observer = Observer(Metrics() if metrics_enabled(app.settings) else None)
    application = RoutedApplication(
        # Health first: a prefix of "/" must not turn /healthz into a repository name; nor /graphql and
        # /mcp, which come before the repository routes too (a router tries its rules in order: a GraphQL
        # request no longer tests the repository routes' forty-odd patterns first). Events, the document
        # and the explorer before the repository routes, which would take their names for ids.
        ops_routes(app, observer.metrics) + graphql_routes(app, graphql) + mcp_routes(app) + events_routes(app)
        + openapi_routes(app) + explorer_routes(app) + oauth_routes(app) + rest_routes(app),
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
