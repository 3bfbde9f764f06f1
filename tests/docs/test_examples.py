"""The documentation's examples run against the seeded demo.

A fenced `bash` or `python` block right after an `<!-- demo -->` comment in docs/*.md is run by a real
`restify serve` on a freshly seeded database (one for the module; pages run in the order of PAGES, each
page's blocks top to bottom). Shell blocks of a page share their variables (each block runs with
`set -a`, so what it assigns is exported, and the next block starts from them); a Python block gets them
as environment variables. `localhost:8000` and `127.0.0.1:8000` are the test server's address.

Checked: every `curl` answers a 2xx status, or the status its line's comment starts with (`# 412`);
the block exits 0; and a block right after `<!-- output -->` is the last line of output of the demo block
before it: JSON compared as data (`"..."` stands for any value), other text exactly.
"""
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATABASE_TIMEOUT_MS
from tests.processes import FAST, ROOT, RUN_WAIT, Server, restify
from tests.servers import PROFILE

DOCS = ROOT / "docs"
PAGES = ["index.md", "repositories.md", "querying.md", "writes.md", "rest.md", "accounts.md", "graphql.md", "mcp.md",
         "live.md", "openapi.md", "deploying.md"]
_BLOCK = re.compile(r"^<!-- (demo|output) -->\n```(\w+)\n(.*?)^```$", re.M | re.S)
_STATUS_COMMENT = re.compile(r"(\d{3})\b")
ANY = "..."
# The shell's curl, recording each answer's status (the last status line of its headers) in $STATUS_LOG;
# its output is followed by a newline, so answers without one stay apart.
CURL_SHIM = r'''
curl() {
    local headers rc
    headers=$(mktemp)
    rc=0
    command curl -D "$headers" "$@" || rc=$?
    printf '%s\n' "$(grep -a '^HTTP/' "$headers" | tail -n 1 | cut -d' ' -f2)" >> "$STATUS_LOG"
    rm -f "$headers"
    echo
    return $rc
}
'''


@dataclass
class Example:
    page: str
    language: str
    code: str
    line: int
    output: tuple[str, str] | None = None  # (language, text)
    statuses: list[str | None] = field(default_factory=list)  # per curl: the expected code, or None for 2xx


def _logical_lines(code: str) -> list[str]:
    joined, current = [], ""
    for line in code.splitlines():
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    return joined


def _expected_statuses(code: str) -> list[str | None]:
    """One entry per curl the block runs: the status its line's comment names, else None (any 2xx)."""
    statuses: list[str | None] = []
    for line in _logical_lines(code):
        command, _, comment = line.partition(" # ") if not line.lstrip().startswith("#") else ("", "", "")
        calls = len(re.findall(r"(?:^|[\s($|])curl\s", command))
        named = _STATUS_COMMENT.match(comment.strip())
        statuses += [named.group(1) if named else None] * calls
    return statuses


def examples(page: str) -> list[Example]:
    text = (DOCS / page).read_text(encoding="utf-8")
    found: list[Example] = []
    for match in _BLOCK.finditer(text):
        kind, language, code = match.groups()
        line = text.count("\n", 0, match.start()) + 1
        if kind == "demo":
            assert language in ("bash", "python"), f"{page}:{line}: a demo block is bash or python"
            found.append(Example(page, language, code, line,
                                 statuses=_expected_statuses(code) if language == "bash" else []))
        else:
            assert found and found[-1].output is None, f"{page}:{line}: an output block follows a demo block"
            found[-1].output = (language, code.strip())
    return found


def _matches(expected: Any, got: Any) -> bool:
    if expected == ANY:
        return True
    if isinstance(expected, dict):
        return isinstance(got, dict) and expected.keys() == got.keys() and all(
            _matches(value, got[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return isinstance(got, list) and len(expected) == len(got) and all(map(_matches, expected, got))
    return bool(expected == got and type(expected) is type(got))


@pytest.fixture(scope="module")
def demo(tmp_path_factory, mongodb_uri):
    """A seeded demo served by `restify serve`, on this session's database server."""
    env = {**FAST, "MONGODB_URI": mongodb_uri, "RESTIFY_DATABASE_NAME": f"t_{uuid.uuid4().hex[:12]}",
           "RESTIFY_DATABASE_PROFILE": PROFILE, "RESTIFY_DATABASE_TIMEOUT_MS": str(DATABASE_TIMEOUT_MS),
           "RESTIFY_AUTH_REGISTRATIONS_PER_ADDRESS": "10000"}
    seeded = restify("seed", env=env)
    assert seeded.returncode == 0, seeded.stderr
    server = Server(ROOT, env, log_dir=tmp_path_factory.mktemp("serve"))
    yield server, env
    assert server.stop() == 0


@pytest.mark.parametrize("page", PAGES)
def test_every_demo_block_of_the_page_runs(demo, page, tmp_path):
    server, env = demo
    address = f"127.0.0.1:{server.port}"
    state, status_log = tmp_path / "state.sh", tmp_path / "statuses"
    state.write_text("")
    bin_dir = str(Path(sys.executable).parent)  # `python` is this interpreter, as in an activated venv
    base_env = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONPATH": str(ROOT), "STATUS_LOG": str(status_log)}
    blocks = examples(page)
    assert blocks, f"{page} has no demo blocks"
    for example in blocks:
        where = f"{page}:{example.line}"
        code = example.code.replace("localhost:8000", address).replace("127.0.0.1:8000", address)
        status_log.write_text("")
        if example.language == "bash":
            script = (f"set -euo pipefail\nset -a\n. {state}\n{CURL_SHIM}\n{code}\n"
                      f"export -p > {state}.next\n")
            run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT, env=base_env,
                                 timeout=RUN_WAIT)
            if run.returncode == 0:
                Path(f"{state}.next").replace(state)
        else:
            variables = subprocess.run(["bash", "-c", f"set -a; . {state}; env -0"], capture_output=True,
                                       cwd=ROOT, env=base_env, timeout=RUN_WAIT).stdout.decode()
            shell_env = dict(item.split("=", 1) for item in variables.split("\0") if "=" in item)
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                                 env={**base_env, **shell_env}, timeout=RUN_WAIT)
        assert run.returncode == 0, f"{where}: exit {run.returncode}\n{run.stdout}\n{run.stderr}"
        got = status_log.read_text().split()
        assert len(got) == len(example.statuses), f"{where}: ran {len(got)} curls, the block has {example.statuses}"
        for number, (expected, status) in enumerate(zip(example.statuses, got, strict=True), 1):
            ok = status == expected if expected else status.startswith("2")
            assert ok, f"{where}: curl {number} answered {status}, expected {expected or '2xx'}\n{run.stdout}"
        if example.output is not None:
            lines = [line for line in run.stdout.splitlines() if line.strip()]
            last = lines[-1] if lines else ""
            language, expected_text = example.output
            if language == "json":
                expected_text = expected_text.replace("localhost:8000", address)
                assert _matches(json.loads(expected_text), json.loads(last)), f"{where}: answered {last}"
            else:
                assert last == expected_text, f"{where}: printed {last!r}"


def test_every_page_with_demo_blocks_is_run():
    marked = sorted(path.name for path in DOCS.glob("*.md") if "<!-- demo -->" in path.read_text(encoding="utf-8"))
    assert marked == sorted(PAGES)


def test_the_status_a_line_names_is_the_one_expected():
    code = ("A=$(curl -s x \\\n     -d '{}')   # 201\ncurl -s y  # 412: stale\n# curl -s z  # a comment\n"
            "curl -s w  # {\"data\": 1}\n")
    assert _expected_statuses(code) == ["201", "412", None]
