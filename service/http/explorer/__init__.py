"""The API explorer: Swagger UI at `/docs` over the service's OpenAPI document, and the shared parts of
the browser pages (GraphiQL on `/graphql` is the GraphQL door's, built on these).

    assets.py   the vendored files, an allow-list served from memory under content-hashed paths
    pages.py    page headers (Content-Security-Policy), the page shell, `/docs`, the routes

The files themselves are in `static/` (their origin and licences: static/SOURCES.md). `explorer.enabled`
turns both pages off."""
from service.http.explorer.assets import ASSETS, asset_url
from service.http.explorer.pages import Page, PageHandler, enabled, explorer_routes, send_page, wants_page

__all__ = ["ASSETS", "Page", "PageHandler", "asset_url", "enabled", "explorer_routes", "send_page", "wants_page"]
