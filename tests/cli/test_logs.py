"""`restify serve` logs, read from its output: one access line per request (id, door, method, route
template, status, duration, user id; never a token or password) as JSON or text, request ids
honoured or made up and echoed, and no INFO lines from dependencies per request."""
import json
import re
import urllib.request
from pathlib import Path

from tests.processes import REQUEST_WAIT, ROOT, Server, request, restify

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "X-Request-Id": "t-mcp"}
PASSWORD = "a-secret-password"


def fetch_id(port: int, path: str) -> str:
    """The `X-Request-Id` a plain request without one was given."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=REQUEST_WAIT) as response:
        return response.headers["X-Request-Id"]


def test_json_access_lines_for_every_door_and_no_dependency_noise(database_env, tmp_path):
    server = Server(ROOT, {**database_env, "RESTIFY_LOG_ACCESS": "all"}, "--log-format", "json", log_dir=tmp_path)
    try:
        port = server.port
        status, user = request(port, "POST", "/api/register", {"name": "Ann", "email": "ann@example.com",
                                                                "password": PASSWORD, "password_confirmation": PASSWORD},
                               headers={"X-Request-Id": "t-register"})
        assert status == 201
        token, user_id = user["meta"]["token"], user["id"]
        assert request(port, "GET", "/api/restify/tags?per_page=2", token=token,
                       headers={"X-Request-Id": "t-rest"})[0] == 200
        assert request(port, "POST", "/graphql", {"query": "{ __typename }"}, token=token,
                       headers={"X-Request-Id": "t-graphql"})[0] == 200
        for _ in range(3):  # the SDK logged an INFO line for each of these
            assert request(port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token=token,
                           headers=MCP_HEADERS)[0] == 200
        assert request(port, "GET", "/api/restify/tags/nope", headers={"X-Request-Id": "bad id!"})[0] == 404
        made_up = fetch_id(port, "/api/restify/tags")
    finally:
        assert server.stop() == 0
    output = Path(server.log.name).read_text()
    lines = [json.loads(line) for line in output.splitlines() if not line.startswith("Restify serving")]
    assert [line for line in lines if line["level"] == "INFO" and not line["logger"].startswith("restify")] == []
    access = {line["request_id"]: dict(line) for line in lines if line["logger"] == "restify.access"}
    for line in access.values():
        assert line["level"] == ("INFO" if line["status"] < 400 else "WARNING")
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
        del line["time"], line["level"], line["logger"], line["message"], line["duration_ms"]
    assert access["t-register"] == {"request_id": "t-register", "door": "rest", "method": "POST",
                                    "route": "/api/register", "status": 201, "user_id": None}
    assert access["t-rest"] == {"request_id": "t-rest", "door": "rest", "method": "GET",
                                "route": "/api/restify/{resource}", "status": 200, "user_id": user_id}
    assert access["t-graphql"] == {"request_id": "t-graphql", "door": "graphql", "method": "POST",
                                   "route": "/graphql", "status": 200, "user_id": user_id}
    assert access["t-mcp"] == {"request_id": "t-mcp", "door": "mcp", "method": "POST", "route": "/mcp",
                               "status": 200, "user_id": user_id}
    assert access[made_up]["route"] == "/api/restify/{resource}"
    (refused,) = [line for line in access.values() if line["status"] == 404]
    assert refused["request_id"] not in ("bad id!", "bad") and refused["route"] == "/api/restify/{resource}/{id}"
    assert sum(line.get("request_id") == "t-mcp" for line in lines) == 3  # one line for each MCP request
    for secret in (token, token.split("|")[-1], PASSWORD, "per_page"):
        assert secret not in output


def test_text_lines_and_by_default_access_lines_only_for_problems(database_env, tmp_path):
    server = Server(ROOT, database_env, log_dir=tmp_path)
    try:
        assert request(server.port, "GET", "/api/restify/tags", headers={"X-Request-Id": "t-ok"})[0] == 200
        assert request(server.port, "GET", "/api/restify/nothing", headers={"X-Request-Id": "t-missing"})[0] == 404
    finally:
        assert server.stop() == 0
    output = Path(server.log.name).read_text()
    assert "t-ok" not in output  # successes are INFO; `log.access = "errors"` keeps them out by default
    assert re.search(r"^\S+ \S+ WARNING restify\.access: t-missing rest GET /api/restify/\{resource\} 404 "
                     r"\d+\.\d\dms user=-$", output, re.MULTILINE), output


def test_an_unknown_log_format_setting_is_refused(tmp_path):
    result = restify("serve", env={"RESTIFY_LOG_FORMAT": "xml"})
    assert result.returncode == 2
    assert result.stderr.strip() == "restify: log.format must be one of text, json, not 'xml'"
