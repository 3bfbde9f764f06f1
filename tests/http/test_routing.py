"""The service's router finds, for every path, the handler and path arguments Tornado's own finds."""
import pytest
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine
from tornado.routing import PathMatches, Rule
from tornado.web import RequestHandler, _ApplicationRouter

from service.http.routing import FirstMatchRouter, RoutedApplication

PATHS = [
    "/healthz", "/healthz/", "/readyz", "/metrics", "/graphql", "/mcp", "/mcp/x", "/docs",
    "/docs/assets/0af3/explorer.js", "/docs/assets/xyz/explorer.js",
    "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server", "/oauth/token", "/oauth/tokens",
    "/api/login", "/api/tokens", "/api/tokens/7", "/api/forgot-password", "/api/verify-email/1/abc",
    "/api/restify/openapi.json", "/api/restify/openapiXjson", "/api/restify/profile", "/api/restify/profile/upload",
    "/api/restify/posts", "/api/restify/posts/", "/api/restify/posts/events", "/api/restify/posts/events/ticket",
    "/api/restify/posts/aggregate", "/api/restify/posts/bulk", "/api/restify/posts/bulk/update",
    "/api/restify/posts/bulk/delete", "/api/restify/posts/65a1/attach/tags", "/api/restify/posts/65a1/detach/tags",
    "/api/restify/posts/65a1/sync/tags", "/api/restify/posts/actions", "/api/restify/posts/getters",
    "/api/restify/posts/getters/run/recent", "/api/restify/posts/getters/recent", "/api/restify/posts/65a1",
    "/api/restify/posts/65a1/upload", "/api/restify/posts/65a1/restore", "/api/restify/posts/65a1/actions",
    "/api/restify/posts/65a1/getters", "/api/restify/posts/65a1/getters/x", "/api/restify/posts/65a1/x/y/z",
    "/api/restify/posts%2F1", "/api/restify/p%C3%A9/65a1", "/storage/a/b.png", "/storage/", "/", "/nowhere",
    "/api/restify/posts/65a1\n", "",
]


def _found(router, path, headers=None):
    request = HTTPServerRequest(start_line=RequestStartLine("GET", path, "HTTP/1.1"), headers=HTTPHeaders({"Host": "t", **(headers or {})}))
    delegate = router.find_handler(request)
    if delegate is None:
        return None
    return delegate.handler_class, delegate.path_args, delegate.path_kwargs


@pytest.mark.parametrize("path", PATHS)
def test_the_service_finds_what_tornado_finds(app, path):
    rules = [Rule(rule.matcher, rule.target, rule.target_kwargs) for rule in app.wildcard_router.rules]
    tornados = _ApplicationRouter(app, rules)
    for upgrade in ({}, {"Upgrade": "websocket"}):
        assert _found(app.wildcard_router, path, upgrade) == _found(tornados, path, upgrade)
    assert isinstance(app.wildcard_router, FirstMatchRouter) and app.wildcard_router._alternation is not None


class _A(RequestHandler):
    pass


class _B(RequestHandler):
    pass


def test_rules_that_cannot_be_joined_are_tried_one_by_one():
    """A named group used by two rules cannot be in one pattern: Tornado's loop finds the rule."""
    application = RoutedApplication([(r"/(?P<name>a)", _A), (r"/(?P<name>b)", _B)])
    found = _found(application.wildcard_router, "/b")
    assert found == (_B, [], {"name": b"b"})
    assert application.wildcard_router._alternation is None


def test_a_rule_added_later_is_found():
    application = RoutedApplication([(r"/a", _A)])
    assert _found(application.wildcard_router, "/b") is None
    application.wildcard_router.add_rules([(PathMatches(r"/b"), _B)])
    assert _found(application.wildcard_router, "/b") == (_B, [], {})
