"""The document printed by `restify openapi` for the demo app, judged by Redocly's linter (its recommended
rules) when `npx` is on PATH, and by the two of its rules this document once broke, checked here without
Node: no two paths a URL could match both ways, no component nothing refers to."""
import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from service.config import Settings
from service.core.declarations.registry import load_app
from service.openapi import document_json
from tests.conftest import ROOT
from tests.openapi.test_generators import REDOCLY

LINT_TIMEOUT = 600  # seconds: a cold `npx` fetches Redocly and its dependencies first; one run, no retry


@pytest.fixture(scope="module")
def document_text() -> str:
    return document_json(load_app(ROOT), Settings(app_dir=ROOT))


def test_redocly_lint_reports_no_error_and_no_warning(document_text, tmp_path):
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not on PATH: Node.js 20.19 or later (with npm) is needed to run Redocly's linter")
    path = tmp_path / "openapi.json"
    path.write_text(document_text)
    env = {**os.environ, "REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
           "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false"}
    # Run in an empty directory, so no redocly.yaml of the checkout or above changes the rules.
    result = subprocess.run([npx, "--yes", REDOCLY, "lint", path.name, "--format", "json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=LINT_TIMEOUT, check=False)
    assert result.stdout.strip(), f"no report: npx could not fetch or start Redocly\n{result.stderr}"
    report = json.loads(result.stdout)
    problems = report["problems"]
    described = json.dumps([{key: problem[key] for key in ("ruleId", "severity", "message")} |
                            {"at": [where["pointer"] for where in problem["location"]]} for problem in problems],
                           indent=2)
    assert problems == [], described
    assert report["totals"]["errors"] == 0, described
    assert result.returncode == 0, result.stderr


def _ambiguous(first: str, second: str) -> bool:
    """Whether one URL could match both templates, each taking it for its own: a literal of one where the
    other has a parameter, both ways (`/r/getters/{key}` and `/r/{id}/upload`). A literal where the other
    has a parameter only one way is no ambiguity: the literal path wins (OpenAPI, Path Templating)."""
    a, b = first.strip("/").split("/"), second.strip("/").split("/")
    if len(a) != len(b):
        return False
    literal_in_a = literal_in_b = False
    for x, y in zip(a, b, strict=True):
        x_param, y_param = x.startswith("{"), y.startswith("{")
        if not x_param and not y_param and x != y:
            return False
        literal_in_a |= not x_param and y_param
        literal_in_b |= not y_param and x_param
    return literal_in_a and literal_in_b


def test_no_two_paths_are_ambiguous(document_text):
    paths = sorted(json.loads(document_text)["paths"])
    found = [(a, b) for i, a in enumerate(paths) for b in paths[i + 1:] if _ambiguous(a, b)]
    assert found == []


def test_the_ambiguity_check_sees_the_shape_the_getters_left():
    assert _ambiguous("/api/restify/posts/getters/{key}", "/api/restify/posts/{id}/upload")
    assert not _ambiguous("/api/restify/posts/getters/run/{key}", "/api/restify/posts/{id}/getters/{key}")
    assert not _ambiguous("/api/restify/posts/upload", "/api/restify/posts/{id}")  # the literal wins


def _references(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_references(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_references(value) for value in node))
    return set()


def test_every_component_is_referred_to(document_text):
    document = json.loads(document_text)
    referred = _references(document)
    unused = [f"#/components/{kind}/{name}" for kind, named in document["components"].items()
              if kind != "securitySchemes" for name in named if f"#/components/{kind}/{name}" not in referred]
    assert unused == []
    assert "405" in document["info"]["description"]  # no component, but the description says when it comes
