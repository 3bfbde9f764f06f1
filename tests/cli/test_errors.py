"""A broken or missing application, reported by every command as one line on stderr, never a traceback."""
import subprocess
import sys

import pytest

from tests.processes import ROOT, RUN_WAIT, restify

APP_COMMANDS = [("serve",), ("seed",), ("token:create", "ann@example.com"), ("token:revoke", "ann@example.com"),
                ("mcp",), ("openapi",), ("watch",)]


def one_line_error(result: subprocess.CompletedProcess, code: int = 2) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.rstrip("\n")


@pytest.mark.parametrize("command", APP_COMMANDS + [("graphql:generate",)], ids=lambda c: c[0])
def test_a_directory_without_repositories_gets_a_one_line_hint(tmp_path, database_env, command):
    result = restify(*command, app_dir=tmp_path, env=database_env)
    assert one_line_error(result, code=1 if command == ("graphql:generate",) else 2) == (
        f"restify: {tmp_path} has no repositories/ package, so it is not a Restify application: run restify "
        "in an application directory, pass --app-dir, or start one with `restify new DIR`")


BROKEN_MODULES = [
    pytest.param("tags.py", lambda text: text.replace("class TagRepository(Repository):",
                                                      "class TagRepository(Repository)"),
                 "class TagRepository(Repository):", "SyntaxError: expected ':'", id="syntax-error"),
    pytest.param("tags.py", lambda text: text.replace('    mcp = ("index", "show", "store")',
                                                      '    mcp = undefined_name'),
                 '    mcp = ("index", "show", "store")', "NameError: name 'undefined_name' is not defined",
                 id="name-error"),
    pytest.param("tags.py", lambda text: text.replace('"max:50"', '"maximum:50"'), '"max:50"',
                 "DeclarationError: TagRepository: field 'name': unknown rule 'maximum:50'", id="bad-rule"),
    pytest.param("tags.py", lambda text: text.replace('    mcp = ("index", "show", "store")',
                                                      '    model = "repositories.models.Label"'),
                 "class TagRepository(Repository):",
                 "DeclarationError: TagRepository.model = 'repositories.models.Label' is not a Model class",
                 id="unresolved-model"),
]


def line_of(path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("module, breaks, at, message", BROKEN_MODULES)
@pytest.mark.parametrize("command", [("serve",), ("openapi",), ("seed",)], ids=lambda c: c[0])
def test_a_broken_module_is_reported_as_file_line_message(app_copy, database_env, module, breaks, at, message,
                                                          command):
    path = app_copy / "repositories" / module
    line = line_of(path, at)
    path.write_text(breaks(path.read_text()))
    error = one_line_error(restify(*command, app_dir=app_copy, env=database_env))
    assert error.startswith(f"{path}:{line}: {message}"), error


def test_a_bad_policies_map_names_the_policies_module(app_copy, database_env):
    policies = app_copy / "repositories" / "policies.py"
    policies.write_text(policies.read_text().replace("Tag: TagPolicy}", "Tag: object}"))
    error = one_line_error(restify("openapi", app_dir=app_copy, env=database_env))
    line = line_of(policies, "POLICIES = ")
    assert error == f"{policies}:{line}: DeclarationError: POLICIES[Tag] = <class 'object'> is not a Policy"


def test_openapi_into_a_pipe_closed_early_ends_quietly():
    process = subprocess.Popen([sys.executable, "-m", "service.cli", "--app-dir", str(ROOT), "openapi"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdout.readline() == b"{\n"
    process.stdout.close()  # as `| head -1` does; the document is larger than the pipe's buffer
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=RUN_WAIT) == 1
    assert stderr == ""
