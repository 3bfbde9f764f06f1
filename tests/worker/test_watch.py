"""`restify watch`: a real process watching a copy of the demo app."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_dir(app_copy):
    return app_copy


@pytest.fixture
def watcher(app_dir):
    log = (app_dir / "watch.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "service.cli", "--app-dir", str(app_dir), "watch"],
                               stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    yield app_dir / "watch.log"
    process.terminate()
    process.wait(timeout=WAIT)
    log.close()


# Seconds to wait for what the watcher does: it answers a change within milliseconds, but on a machine
# whose cores are taken by other work its start alone (Python and the service's imports) can take many.
WAIT = 120.0


def wait_for(predicate, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def add_field(app_dir: Path, line: str) -> None:
    module = app_dir / "repositories" / "tags.py"
    text = module.read_text()
    module.write_text(text.replace('.searchable().sortable()]', f'.searchable().sortable(), {line}]'))


def test_watch_regenerates_the_schema_when_a_module_changes(app_dir, watcher):
    schema = app_dir / "schema" / "schema.graphql"
    wait_for(schema.exists)
    assert "color" not in schema.read_text()
    add_field(app_dir, 'field("color").nullable()')
    wait_for(lambda: "color: String" in schema.read_text())
    assert "color: String" in schema.read_text().split("input TagInput")[1]


def test_a_broken_module_keeps_the_last_good_schema_and_reports_file_and_line(app_dir, watcher):
    schema = app_dir / "schema" / "schema.graphql"
    wait_for(schema.exists)
    good = schema.read_text()
    module = app_dir / "repositories" / "tags.py"
    module.write_text(module.read_text() + "\ndef broken(:\n")
    wait_for(lambda: "SyntaxError" in watcher.read_text())
    assert f"{module}:" in watcher.read_text()
    assert schema.read_text() == good
    add_field(app_dir, 'field("rules_bad").rules("nonsense")')
    module.write_text(module.read_text().replace("\ndef broken(:\n", "\n"))
    wait_for(lambda: "unknown rule 'nonsense'" in watcher.read_text())
    assert schema.read_text() == good


def test_unchanged_output_is_not_rewritten(app_dir, watcher):
    schema = app_dir / "schema" / "schema.graphql"
    wait_for(schema.exists)
    stamp = schema.stat().st_mtime_ns
    module = app_dir / "repositories" / "tags.py"
    module.write_text(module.read_text() + "\n# a comment changes nothing in the schema\n")
    fingerprint = app_dir / "schema" / ".fingerprint"
    before = fingerprint.read_text()
    wait_for(lambda: fingerprint.read_text() != before)
    assert schema.stat().st_mtime_ns == stamp
