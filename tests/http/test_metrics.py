"""`/metrics`: Prometheus text with requests and durations per door, method, route template and
status; `metrics.token` guards it; `metrics.enabled = false` turns it off."""
import json

import pytest

from tests.prometheus import samples

REQUESTS, DURATION_COUNT = "restify_requests_total", "restify_request_duration_seconds_count"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def config(config, request):
    """The conftest settings, plus this test's `metrics` settings when parametrized indirectly."""
    return {**config, "metrics": getattr(request, "param", {})}


async def scrape(api, **kw) -> str:
    response = await api.get("/metrics", **kw)
    assert response.status == 200, response.body
    assert response.headers["Content-Type"].startswith("text/plain")
    return response.body.decode()


@pytest.fixture
def mcp_endpoint(app, io_loop):
    from service.mcp import endpoints
    (endpoint,) = endpoints(app)
    yield endpoint
    io_loop.run_sync(endpoint.close)


async def test_requests_are_counted_by_door_method_route_template_and_status(api, ann, mcp_endpoint):
    created = await api.post("/api/restify/tags", {"name": "python"}, token=ann["token"])
    tag_id = created.json["data"]["id"]
    assert (await api.get(f"/api/restify/tags/{tag_id}")).status == 200
    assert (await api.get(f"/api/restify/tags/{tag_id}")).status == 200
    assert (await api.get("/api/restify/tags/000000000000000000000000")).status == 404
    assert (await api.post("/graphql", {"query": "{ __typename }"})).status == 200
    mcp = await api.request("POST", "/mcp", body=json.dumps(LIST_TOOLS), token=ann["token"], headers=MCP_HEADERS)
    assert mcp.status == 200
    assert (await api.get("/no/such/path")).status == 404
    await api.get("/healthz")

    text = await scrape(api)
    expected = {
        ("rest", "POST", "/api/register", "201"): 1.0,  # the `ann` fixture
        ("rest", "POST", "/api/restify/{resource}", "201"): 1.0,
        ("rest", "GET", "/api/restify/{resource}/{id}", "200"): 2.0,
        ("rest", "GET", "/api/restify/{resource}/{id}", "404"): 1.0,
        ("graphql", "POST", "/graphql", "200"): 1.0,
        ("mcp", "POST", "/mcp", "200"): 1.0,
        ("rest", "GET", "unmatched", "404"): 1.0,
    }
    assert samples(text, REQUESTS) == expected
    assert samples(text, DURATION_COUNT) == expected  # the histogram saw each request once
    assert tag_id not in text and "/no/such/path" not in text  # templates, never raw paths
    assert "# TYPE restify_request_duration_seconds histogram" in text
    assert "# TYPE restify_requests_total counter" in text


async def test_health_and_metrics_requests_are_not_counted(api):
    await api.get("/healthz")
    await api.get("/readyz")
    await scrape(api)
    assert samples(await scrape(api), REQUESTS) == {}


@pytest.mark.parametrize("config", [{"token": "scrape-secret"}], indirect=True)
async def test_a_metrics_token_is_required_when_set_and_is_not_a_user_token(api, ann):
    for token in (None, "wrong-secret", ann["token"]):  # a user's token does not open /metrics
        refused = await api.get("/metrics", token=token)
        assert (refused.status, refused.json) == (401, {"message": "Unauthenticated."})
        assert refused.headers["WWW-Authenticate"] == "Bearer"
    # Not looked up as a user token (it is none): the scrape succeeds.
    assert samples(await scrape(api, token="scrape-secret"), REQUESTS)[("rest", "POST", "/api/register", "201")] == 1.0


@pytest.mark.parametrize("config", [{"enabled": False}], indirect=True)
async def test_metrics_can_be_turned_off(api):
    assert (await api.get("/api/restify/tags")).status == 200
    response = await api.get("/metrics")
    assert (response.status, response.json) == (404, {"message": "Not found."})
