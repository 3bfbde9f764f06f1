"""The explorer's pages: an HTML shell that loads allow-listed assets, sent with headers that keep the
page to them (a Content-Security-Policy without inline scripts), `/docs` itself, and the routes."""
import html
import re
from dataclasses import dataclass, field

from tornado.httputil import HTTPServerRequest

from service.config import Settings
from service.core.declarations.app import Restify
from service.http.base import JsonHandler
from service.http.explorer.assets import PREFIX, AssetHandler, asset_url

# A Host header that is a host name or address and a port, nothing else: only such a one is named in the
# policy (the WebSocket sources of subscriptions); any other gets `'self'` alone.
_HOST = re.compile(r"[A-Za-z0-9.-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")


def enabled(settings: Settings) -> bool:
    return settings.value("explorer", "enabled") is not False


def wants_page(request: HTTPServerRequest, settings: Settings) -> bool:
    """A browser opening the address (GET or HEAD asking for HTML, with no GraphQL `query` in it),
    while the explorer is enabled."""
    return (enabled(settings) and request.method in ("GET", "HEAD") and "query" not in request.query_arguments
            and "text/html" in request.headers.get("Accept", ""))


def content_security_policy(request: HTTPServerRequest) -> str:
    """Scripts, styles and fonts from the service only (inline `data:` images and fonts are the vendored
    CSS's own); requests to the service itself, and its WebSocket for subscriptions."""
    connect = "'self'"
    if _HOST.fullmatch(request.host):
        connect += f" ws://{request.host} wss://{request.host}"
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"font-src 'self' data:; connect-src {connect}; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'")


@dataclass(frozen=True)
class Page:
    """An HTML shell: its styles, one element for the scripts to fill, then the scripts. The element's
    `data-*` attributes carry the page's settings to them, so there is no inline script to allow."""
    title: str
    root: str
    styles: tuple[str, ...]
    scripts: tuple[str, ...]
    data: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        links = "".join(f'<link rel="stylesheet" href="{asset_url(name)}">' for name in self.styles)
        scripts = "".join(f'<script src="{asset_url(name)}"></script>' for name in self.scripts)
        data = "".join(f' data-{key}="{html.escape(value)}"' for key, value in self.data.items())
        return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                '<link rel="icon" href="data:,">'  # else the browser asks for /favicon.ico, a 404
                f"<title>{html.escape(self.title)}</title>{links}</head>"
                f'<body><div id="{self.root}"{data}></div>{scripts}</body></html>')


async def send_page(handler: JsonHandler, page: Page) -> None:
    """Answers with `page` and the headers that confine it."""
    handler.set_header("Content-Type", "text/html; charset=utf-8")
    handler.set_header("Content-Security-Policy", content_security_policy(handler.request))
    handler.set_header("X-Content-Type-Options", "nosniff")
    handler.set_header("Referrer-Policy", "no-referrer")
    handler.set_header("Cache-Control", "no-cache")  # its asset paths change with a release
    # /graphql answers API clients at the same address; `Origin` may be there already (CORS)
    handler.set_header("Vary", ", ".join(filter(None, (handler._headers.get("Vary"), "Accept"))))
    await handler.send_bytes(page.render())


class PageHandler(JsonHandler):
    door = "explorer"

    async def admit(self) -> None:
        """No bearer token is read: a page is the same for everyone, the token goes into it."""


class DocsHandler(PageHandler):
    async def get(self) -> None:
        prefix = self.app.settings.get("server", "prefix").rstrip("/")
        await send_page(self, Page("Restify API", "swagger-ui", ("swagger-ui.css",),
                                   ("swagger-ui-bundle.js", "swagger-init.js"),
                                   {"document": f"{prefix}/openapi.json"}))


def explorer_routes(app: Restify) -> list[tuple]:
    """`/docs` and the assets of both pages, when `explorer.enabled`; they go before the REST routes,
    which with a server prefix of `/` would take `docs` for a repository name."""
    if not enabled(app.settings):
        return []
    state = {"app": app}
    return [("/docs", DocsHandler, state, "/docs"),
            (f"{PREFIX}/([0-9a-f]+)/([^/]+)", AssetHandler, state, f"{PREFIX}/{{hash}}/{{name}}")]
