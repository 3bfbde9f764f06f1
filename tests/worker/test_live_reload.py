"""`restify serve --watch`: save a repository module and REST, GraphQL and MCP follow
without a restart; a broken module keeps the last good state."""
import threading
import time

import pytest

from tests.processes import Server, request
from tests.worker.test_watch import WAIT, add_field

@pytest.fixture
def server(app_copy, database_env):
    running = Server(app_copy, database_env, "--watch")
    yield running
    running.stop()


def wait_until(check, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def graphql(port: int, query: str) -> dict:
    return request(port, "POST", "/graphql", {"query": query})[1]


def tag_attributes(port: int) -> dict:
    status, body = request(port, "GET", "/api/restify/tags")
    assert status == 200
    return body["data"][0]["attributes"] if body["data"] else {}


def test_a_saved_module_is_served_by_rest_and_graphql_without_restart(server, app_copy, database_env):
    status, user = request(server.port, "POST", "/api/register", {
        "name": "Ann", "email": "ann@example.com", "password": "secret-pass", "password_confirmation": "secret-pass"})
    token = user["meta"]["token"]
    assert request(server.port, "POST", "/api/restify/tags", {"name": "one"}, token=token)[0] == 201
    assert "color" not in tag_attributes(server.port)
    assert "errors" in graphql(server.port, "{ tagList { name color } }")
    statuses: list[int] = []
    stop = threading.Event()

    def keep_reading() -> None:  # requests in flight while the reload lands
        while not stop.is_set():
            statuses.append(request(server.port, "GET", "/api/restify/tags?related=")[0])

    reader = threading.Thread(target=keep_reading)
    reader.start()
    wait_until(lambda: statuses)  # reading before the change
    add_field(app_copy, 'field("color").nullable()')
    wait_until(lambda: "color" in tag_attributes(server.port))
    reloaded = len(statuses)
    wait_until(lambda: len(statuses) > reloaded + 5)  # and after the reload landed
    stop.set()
    reader.join()
    assert set(statuses) == {200}
    assert graphql(server.port, "{ tagList { name color } }") == {"data": {"tagList": [{"name": "one", "color": None}]}}
    status, created = request(server.port, "POST", "/api/restify/tags", {"name": "two", "color": "red"}, token=token)
    assert (status, created["data"]["attributes"]["color"]) == (201, "red")
    status, listed = request(server.port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                             token=token, headers={"Accept": "application/json, text/event-stream"})
    store = next(t for t in listed["result"]["tools"] if t["name"] == "tags-store-tool")
    assert "color" in store["inputSchema"]["properties"]  # the tool list follows the same registry


def test_a_broken_module_keeps_serving_the_last_good_state(server, app_copy):
    module = app_copy / "repositories" / "tags.py"
    good = module.read_text()
    module.write_text(good + "\ndef broken(:\n")
    wait_until(lambda: "SyntaxError" in open(server.log.name).read())  # the reload was tried, and failed
    assert request(server.port, "GET", "/api/restify/tags")[0] == 200
    assert graphql(server.port, "{ tagList { name } }") == {"data": {"tagList": []}}
    module.write_text(good.replace('.searchable().sortable()]', '.searchable().sortable(), field("size").numeric()]'))
    wait_until(lambda: graphql(server.port, "{ tagList { name size } }") == {"data": {"tagList": []}})
