"""HEAD on every GET route answers what GET answers, status and headers, without the body; and the
`Server` header names no version."""
from urllib.parse import urlencode

import pytest

from tests.images import multipart, png

PREFIX = "/api/restify"
GRAPHQL = "/graphql?" + urlencode({"query": "{ postList { id title } }"})


@pytest.fixture
def config(config):
    config["files"]["max_bytes"] = 4096
    return config


@pytest.fixture
def paths(api, ann, io_loop):
    """Every GET route with something to show: index, show, profile, a stored file, OpenAPI, GraphQL."""
    async def make() -> dict[str, str]:
        post = (await api.post(f"{PREFIX}/posts", {"title": "Hello"}, token=ann["token"])).json["data"]
        body, headers = multipart({"name": "Ann", "email": ann["email"]}, {"avatar": ("me.png", png(), "image/png")})
        avatar = (await api.post(f"{PREFIX}/profile", body=body, headers=headers, token=ann["token"])).json
        return {"index": f"{PREFIX}/posts?per_page=5", "show": f"{PREFIX}/posts/{post['id']}",
                "profile": f"{PREFIX}/profile", "file": avatar["attributes"]["avatar"],
                "openapi": f"{PREFIX}/openapi.json", "graphql": GRAPHQL,
                "missing record": f"{PREFIX}/posts/{'0' * 24}", "unknown path": "/nowhere",
                "no GET route": "/api/login", "mcp": "/mcp"}
    return io_loop.run_sync(make)


ROUTES = ["index", "show", "profile", "file", "openapi", "graphql", "missing record", "unknown path",
          "no GET route", "mcp"]


def _comparable(headers) -> dict[str, str]:
    # The date and the request id differ from one answer to the next by design.
    return {name: value for name, value in headers.get_all() if name not in ("Date", "X-Request-Id")}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("signed_in", [True, False], ids=["user", "guest"])
async def test_head_answers_the_status_and_headers_of_get_without_a_body(api, ann, paths, route, signed_in):
    token = ann["token"] if signed_in else None
    got = await api.get(paths[route], token=token)
    head = await api.request("HEAD", paths[route], token=token)
    assert (head.status, _comparable(head.headers)) == (got.status, _comparable(got.headers))
    assert head.body == b""
    assert got.body  # GET has one: HEAD left it out
    if route in ("index", "show", "file", "openapi", "graphql"):
        assert got.status == 200


async def test_the_server_header_names_no_version(api):
    for response in (await api.get(f"{PREFIX}/posts"), await api.get("/nowhere"), await api.get(GRAPHQL),
                     await api.post("/api/login", {"email": "nobody@example.com", "password": "x"})):
        assert response.headers["Server"] == "restify"
