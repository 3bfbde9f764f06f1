"""The explorer over plain HTTP: the pages and their headers, the asset allow-list, `explorer.enabled`,
and `/graphql` answering API clients as before."""
import re
from urllib.parse import quote, urlencode

import pytest

from service.http.explorer import ASSETS, asset_url

@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's overrides when parametrized indirectly."""
    return {**config, **getattr(request, "param", {})}


HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def assets_of(page: str) -> list[str]:
    """What the page loads from the service (the icon is `data:,`, so the browser asks for no favicon)."""
    return [url for url in re.findall(r'(?:src|href)="([^"]+)"', page) if url != "data:,"]


def policy(response) -> dict[str, str]:
    directives = (d.strip().split(" ", 1) for d in response.headers["Content-Security-Policy"].split(";"))
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives}


@pytest.mark.parametrize("path, root", [("/docs", "swagger-ui"), ("/graphql", "graphiql")])
async def test_a_page_loads_only_listed_assets_under_a_strict_policy(api, path, root):
    response = await api.get(path, headers=HTML)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    page = response.body.decode()
    assert f'<div id="{root}"' in page
    assert "<script>" not in page and "style=" not in page  # nothing inline for the policy to allow
    csp = policy(response)
    assert csp["default-src"] == "'none'" and csp["script-src"] == "'self'" and csp["style-src"] == "'self'"
    host = api.client.get_url("/").split("/")[2]
    assert csp["connect-src"] == f"'self' ws://{host} wss://{host}"
    assert csp["frame-ancestors"] == "'none'"
    loaded = assets_of(page)
    assert loaded and all(url == asset_url(url.rsplit("/", 1)[1]) for url in loaded)
    for url in loaded:
        asset = await api.get(url)
        assert asset.status == 200, url
        assert asset.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert asset.headers["X-Content-Type-Options"] == "nosniff"
        assert asset.headers["Content-Type"].startswith(("text/javascript", "text/css"))


async def test_head_answers_as_get_without_the_page(api):
    response = await api.request("HEAD", "/docs", headers=HTML)
    assert response.status == 200 and response.body == b""
    assert "Content-Security-Policy" in response.headers


async def test_the_docs_page_names_the_openapi_document(api):
    page = (await api.get("/docs", headers=HTML)).body.decode()
    assert 'data-document="/api/restify/openapi.json"' in page


async def test_graphiql_is_pointed_at_the_graphql_path(api):
    page = (await api.get("/graphql", headers=HTML)).body.decode()
    assert 'data-endpoint="/graphql"' in page


async def test_a_host_header_that_is_not_a_host_is_not_written_into_the_policy(api):
    # Tornado refuses most such headers (400); `;` is one it lets through, and a directive's separator.
    response = await api.get("/docs", headers={**HTML, "Host": "evil.example;script-src"})
    assert policy(response)["connect-src"] == "'self'"
    assert policy(response)["script-src"] == "'self'"


@pytest.mark.parametrize("path", [
    "/docs/assets/{hash}/../../../service/config.py",
    "/docs/assets/{hash}/..%2F..%2Fconfig.py",
    "/docs/assets/{hash}/%2e%2e%2f%2e%2e%2fassets.py",
    "/docs/assets/{hash}/assets.py",
    "/docs/assets/{hash}/licenses%2Freact.LICENSE",
    "/docs/assets/{hash}/..",
    "/docs/assets/{hash}/",
    "/docs/assets/0000000000000000/swagger-ui.css",  # a name on the list, but not its content's hash
    "/docs/assets/swagger-ui.css",
    "/docs/assets/{hash}/swagger-ui.css/x",
    "/docs/assets/{hash}/SWAGGER-UI.CSS",
])
async def test_only_listed_files_are_served(api, path):
    response = await api.get(path.replace("{hash}", ASSETS["swagger-ui.css"].digest))
    assert response.status == 404
    assert response.json == {"message": "Not found."}


async def test_every_listed_file_is_served_with_its_type(api):
    for name, asset in ASSETS.items():
        response = await api.get(f"/docs/assets/{asset.digest}/{quote(name)}")
        assert response.status == 200 and response.body == asset.body, name
        assert response.headers["Content-Type"] == asset.content_type


@pytest.mark.parametrize("config", [{"explorer": {"enabled": False}}], indirect=True)
async def test_turned_off_the_pages_and_assets_are_not_found(api):
    for path in ("/docs", asset_url("swagger-ui-bundle.js"), asset_url("graphiql.min.js")):
        response = await api.get(path, headers=HTML)
        assert (response.status, response.json) == (404, {"message": "Not found."}), path
    # /graphql answers a browser as it answers an API client: a GraphQL error, never the page
    response = await api.get("/graphql", headers=HTML)
    assert (response.status, response.json) == (200, NO_QUERY)


@pytest.mark.parametrize("headers", [{}, {"Accept": "application/json"}, {"Accept": "*/*"}])
async def test_graphql_get_for_api_clients_is_unchanged(api, headers):
    response = await api.get(f"/graphql?{urlencode({'query': '{ postList { title } }'})}", headers=headers)
    assert (response.status, response.json) == (200, {"data": {"postList": []}})
    assert response.headers["Content-Type"].startswith("application/json")


async def test_a_browser_sending_a_query_gets_its_answer_not_the_page(api):
    response = await api.get(f"/graphql?{urlencode({'query': '{ postList { title } }'})}", headers=HTML)
    assert (response.status, response.json) == (200, {"data": {"postList": []}})


NO_QUERY = {"errors": [{"message": "The request must contain a query string.", "extensions": {"code": "BAD_REQUEST"}}]}


@pytest.mark.parametrize("headers", [{}, {"Accept": "application/json"}, {"Accept": "*/*"}])
async def test_graphql_without_a_query_is_answered_as_before_for_api_clients(api, headers):
    response = await api.get("/graphql", headers=headers)
    assert (response.status, response.json) == (200, NO_QUERY)
