"""The Tornado application: routes for auth and repositories, JSON 404 for the rest."""
import logging
import re

from tornado.httpserver import HTTPServer
from tornado.log import access_log
from tornado.web import Application, RequestHandler

from service.core.app import Restify
from service.http.base import NotFoundHandler
from service.http.events import events_routes
from service.http.handlers import (
    CollectionHandler, CollectionUploadHandler, LoginHandler, LogoutHandler, ProfileHandler, ProfileUploadHandler,
    RecordHandler, RecordUploadHandler, RegisterHandler,
)
from service.http.files import FileHandler
from service.http.openapi import OpenApiHandler
from service.mcp import mcp_routes
from service.http.graphql import graphql_routes
from service.graphql.service import GraphQLService


def rest_routes(app: Restify) -> list[tuple]:
    prefix = re.escape(app.settings.get("server", "prefix").rstrip("/"))
    auth_prefix = re.escape(app.settings.get("server", "auth_prefix").rstrip("/"))
    files = re.escape(app.settings.get("files", "url_prefix").rstrip("/"))
    state = {"app": app}
    return [
        (rf"{auth_prefix}/register", RegisterHandler, state),
        (rf"{auth_prefix}/login", LoginHandler, state),
        (rf"{auth_prefix}/logout", LogoutHandler, state),
        (rf"{prefix}/profile", ProfileHandler, state),
        (rf"{prefix}/profile/upload", ProfileUploadHandler, state),
        (rf"{prefix}/openapi\.json", OpenApiHandler, state),
        (rf"{files}/(.+)", FileHandler, state),
        (rf"{prefix}/([^/]+)", CollectionHandler, state),
        (rf"{prefix}/([^/]+)/upload", CollectionUploadHandler, state),
        (rf"{prefix}/([^/]+)/([^/]+)", RecordHandler, state),
        (rf"{prefix}/([^/]+)/([^/]+)/upload", RecordUploadHandler, state),
    ]


def make_app(app: Restify, graphql: GraphQLService | None = None, **settings: object) -> Application:
    """The whole service; pass `graphql` to keep a handle for reloading its schema."""
    return Application(
        events_routes(app) + rest_routes(app) + graphql_routes(app, graphql) + mcp_routes(app),
        default_handler_class=NotFoundHandler,
        default_handler_args={"app": app},
        **{"log_function": log_request, **settings},
    )


# Bodies are streamed by the handlers, which refuse what is over their own limits with a 413.
MAX_BODY = 64 * 1024 * 1024


def make_server(app: Restify, graphql: GraphQLService | None = None) -> HTTPServer:
    """The HTTP server `restify serve` runs. `X-Forwarded-For` / `X-Real-Ip` are believed only
    with `server.trust_proxy_headers`: a client could otherwise pick the address that login
    throttling counts against, and take a fresh one for each attempt."""
    trusted = app.settings.get("server", "trust_proxy_headers") is True
    return HTTPServer(make_app(app, graphql), xheaders=trusted, max_body_size=MAX_BODY)


def log_request(handler: RequestHandler) -> None:
    """Successes at DEBUG (a line per request costs as much as a small query), problems louder."""
    status = handler.get_status()
    level = logging.DEBUG if status < 400 else logging.WARNING if status < 500 else logging.ERROR
    if access_log.isEnabledFor(level):
        access_log.log(level, "%d %s %.2fms", status, handler._request_summary(),
                       1000.0 * handler.request.request_time())
