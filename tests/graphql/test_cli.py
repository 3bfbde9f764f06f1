"""`restify graphql:generate` and `restify publish graphql-config`,
run as the command itself on a copy of the demo app in a temporary directory.
"""
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from service.graphql.config import DEFAULTS, PUBLISHED, GraphQLConfig
from service.graphql.executor import load_resolver_classes
from service.graphql.generator import render
from service.graphql.resolvers import RepositoryResolvers
from tests.processes import RUN_WAIT

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "schema" / "schema.graphql"  # checked in; pinned to the generator by test_generator.py
RESOLVERS = {"comment.py": "comments", "post.py": "posts", "tag.py": "tags", "user.py": "users"}
TYPE_LINES = [
    "GraphQL schema preview:",
    ("  type Comment (comments): queries comment, commentList, commentPage; mutations createComment, updateComment, "
     "deleteComment; relations: post, user"),
    ("  type Post (posts): queries post, postList, postPage; mutations createPost, updatePost, deletePost; "
     "relations: user, comments, tags"),
    "  type Tag (tags): queries tag, tagList, tagPage; mutations createTag, updateTag, deleteTag; relations: none",
    "  type User (users): queries user, userList, userPage, me; mutations createUser, updateUser, deleteUser; relations: posts",
]
NOT_GENERATED = "restify: schema not generated, keeping the previous one: "
OLD = 1_000_000_000  # an mtime in 2001: a rewritten file gets a new one


@pytest.fixture
def app_dir(tmp_path):
    """A copy of the demo app's repositories; nothing else."""
    target = (tmp_path / "app").resolve()
    shutil.copytree(ROOT / "repositories", target / "repositories", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def restify(app_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "service.cli", "--app-dir", str(app_dir), *args],
                          cwd=app_dir, capture_output=True, text=True, timeout=RUN_WAIT, check=False)


def generate(app_dir: Path, *args: str) -> subprocess.CompletedProcess:
    result = restify(app_dir, "graphql:generate", *args)
    assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr
    return result


def preview(*files: tuple[str, Path, str]) -> str:
    """The expected stdout: the type lines, then `state path [note]` for each planned file."""
    notes = {"skipped": " (exists; use --force to overwrite)"}
    return "\n".join(TYPE_LINES + [f"  {state:>9}  {path}{notes.get(state, '')}" for state, path in files]) + "\n"


def schema_files(state: str, output: Path, schema_file: str = "schema.graphql") -> list[tuple[str, Path]]:
    return [(state, output / schema_file), (state, output / ".fingerprint")]


def resolver_files(states: dict[str, str], output: Path) -> list[tuple[str, Path]]:
    return [(states[name], output / "resolvers" / name) for name in sorted(RESOLVERS)]


def snapshot(*paths: Path) -> dict[Path, tuple[bytes, int]]:
    """Content and mtime (ns) of each file, to prove a run left them alone."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def age(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (OLD, OLD))


# -- graphql:generate -----------------------------------------------------------------------------

@pytest.mark.parametrize("options, output, schema_file", [
    ((), "schema", "schema.graphql"),
    (("--output-path", "gql"), "gql", "schema.graphql"),
    (("--schema-file", "api.graphql"), "schema", "api.graphql"),
    (("--output-path", "build/graphql", "--schema-file", "api.graphql"), "build/graphql", "api.graphql"),
])
def test_generate_prints_a_preview_of_types_operations_and_files_then_writes_the_schema(
        app_dir, options, output, schema_file):
    result = generate(app_dir, *options)
    written = app_dir / output / schema_file
    assert result.stdout == preview(*schema_files("new", app_dir / output, schema_file))
    assert written.read_text() == EXPECTED.read_text()
    assert sorted(p.relative_to(app_dir).as_posix() for p in app_dir.rglob("*")
                  if p.is_file() and "repositories" not in p.parts) == sorted([
                      f"{output}/{schema_file}", f"{output}/.fingerprint"])


def test_unchanged_output_is_not_rewritten(app_dir):
    generate(app_dir, "--resolvers")
    output = app_dir / "schema"
    files = [output / "schema.graphql", output / ".fingerprint", *(output / "resolvers" / n for n in RESOLVERS)]
    age(*files)
    before = snapshot(*files)
    result = generate(app_dir, "--resolvers")
    assert result.stdout == preview(*schema_files("unchanged", output),
                                    *resolver_files(dict.fromkeys(RESOLVERS, "unchanged"), output))
    assert snapshot(*files) == before


def with_member(text: str, header: str, member: str) -> str:
    """SDL `text` with `member` added, in sorted place, to the block that opens with `header`."""
    lines = text.splitlines()
    start = lines.index(header) + 1
    end = lines.index("}", start)
    block = sorted([line.strip() for line in lines[start:end]] + [member])
    return "\n".join(lines[:start] + [f"  {line}" for line in block] + lines[end:]) + "\n"


def test_a_changed_repository_rewrites_the_schema(app_dir):
    generate(app_dir)
    schema = app_dir / "schema" / "schema.graphql"
    age(schema)
    posts = app_dir / "repositories" / "posts.py"
    posts.write_text(posts.read_text().replace('field("body").textarea().nullable(),',
                                               'field("body").textarea().nullable(),\n'
                                               '            field("subtitle").nullable(),'))
    result = generate(app_dir)
    assert result.stdout == preview(*schema_files("changed", app_dir / "schema"))
    assert schema.stat().st_mtime_ns != OLD * 10**9
    expected = with_member(EXPECTED.read_text(), "type Post {", "subtitle: String")
    expected = with_member(expected, "input PostBulkUpdate {", "subtitle: String")  # the fields of PostInput
    assert schema.read_text() == with_member(expected, "input PostInput {", "subtitle: String")


def test_resolvers_option_writes_one_resolver_class_per_repository(app_dir):
    result = generate(app_dir, "--resolvers")
    output = app_dir / "schema"
    assert result.stdout == preview(*schema_files("new", output),
                                    *resolver_files(dict.fromkeys(RESOLVERS, "new"), output))
    # The generated files are the checked-in ones of the demo app, and load as resolver classes.
    for name in RESOLVERS:
        assert (output / "resolvers" / name).read_text() == (ROOT / "schema" / "resolvers" / name).read_text()
    classes = load_resolver_classes(output / "resolvers")
    assert {resource: cls.__name__ for resource, cls in classes.items()} == {
        "comments": "CommentResolvers", "posts": "PostResolvers", "tags": "TagResolvers", "users": "UserResolvers"}
    assert all(issubclass(cls, RepositoryResolvers) for cls in classes.values())


def test_generate_without_force_skips_existing_resolver_files_and_says_which(app_dir):
    generate(app_dir, "--resolvers")
    output = app_dir / "schema"
    customized = output / "resolvers" / "post.py"
    customized.write_text(customized.read_text() + "\n# customized\n")
    result = generate(app_dir, "--resolvers")
    assert result.stdout == preview(*schema_files("unchanged", output), *resolver_files(
        {"comment.py": "unchanged", "post.py": "skipped", "tag.py": "unchanged", "user.py": "unchanged"}, output))
    assert customized.read_text().endswith("\n# customized\n")


def test_generate_with_force_overwrites_existing_resolver_files(app_dir):
    generate(app_dir, "--resolvers")
    output = app_dir / "schema"
    customized = output / "resolvers" / "post.py"
    customized.write_text(customized.read_text() + "\n# customized\n")
    result = generate(app_dir, "--resolvers", "--force")
    assert result.stdout == preview(*schema_files("unchanged", output), *resolver_files(
        {"comment.py": "unchanged", "post.py": "changed", "tag.py": "unchanged", "user.py": "unchanged"}, output))
    assert customized.read_text() == (ROOT / "schema" / "resolvers" / "post.py").read_text()


def test_generate_honours_graphql_toml(app_dir, registry):
    (app_dir / "graphql.toml").write_text(PUBLISHED.replace('exclude = []', 'exclude = ["users", "comments"]')
                                          .replace('path = "schema"', 'path = "api"')
                                          .replace('boolean = "Boolean"', 'boolean = "String"'))
    result = generate(app_dir)
    output = app_dir / "api"
    assert result.stdout == "\n".join([TYPE_LINES[0], TYPE_LINES[2], TYPE_LINES[3]] + [
        f"  {'new':>9}  {output / 'schema.graphql'}", f"  {'new':>9}  {output / '.fingerprint'}"]) + "\n"
    config = GraphQLConfig({"repositories": {"exclude": ["users", "comments"]}, "types": {"boolean": "String"}})
    assert (output / "schema.graphql").read_text() == render(registry, config)
    assert "  published: String\n" in render(registry, config)
    assert not (app_dir / "schema").exists()


# -- a broken repository module -------------------------------------------------------------------

def _append(text: str, extra: str) -> tuple[str, int]:
    """`text` with `extra` appended, and the line number of the first line of `extra`."""
    body = text if text.endswith("\n") else text + "\n"
    return body + extra, body.count("\n") + 1


def _replace(text: str, old: str, new: str) -> tuple[str, int]:
    assert old in text
    return text.replace(old, new, 1), text[:text.index(old)].count("\n") + 1


BROKEN = [
    pytest.param(lambda text: _append(text, "def broken(:\n    pass\n"), "SyntaxError: invalid syntax",
                 id="syntax-error"),
    pytest.param(lambda text: _append(text, "undefined_name\n"), "NameError: name 'undefined_name' is not defined",
                 id="error-at-import"),
    pytest.param(lambda text: _replace(text, '"min:0"', '"min:zero"'),
                 "DeclarationError: PostRepository: field 'views': rule 'min:zero' needs a number",
                 id="bad-rule"),
    pytest.param(lambda text: _replace(text, '"min:0")', '"min:0", 1 / 0)'),
                 "ZeroDivisionError: division by zero",
                 id="error-in-fields"),
]


@pytest.mark.parametrize("breaks, message", BROKEN)
def test_a_broken_repository_module_exits_1_with_file_and_line_and_keeps_the_previous_schema(
        app_dir, breaks, message):
    generate(app_dir)
    output = app_dir / "schema"
    files = [output / "schema.graphql", output / ".fingerprint"]
    age(*files)
    before = snapshot(*files)
    posts = app_dir / "repositories" / "posts.py"
    text, line = breaks(posts.read_text())
    posts.write_text(text)
    result = restify(app_dir, "graphql:generate", "--resolvers")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith(f"{NOT_GENERATED}{posts}:{line}: "), result.stderr
    assert result.stderr.endswith(f"{message}\n"), result.stderr
    assert result.stderr.count("\n") == 1
    assert snapshot(*files) == before
    assert not (output / "resolvers").exists()


def test_a_type_mapping_to_an_unknown_scalar_exits_1_and_keeps_the_previous_schema(app_dir):
    generate(app_dir)
    schema = app_dir / "schema" / "schema.graphql"
    before = snapshot(schema)
    (app_dir / "graphql.toml").write_text('[types]\nboolean = "Bit"\n')
    result = restify(app_dir, "graphql:generate")
    message = "DeclarationError: graphql config maps 'boolean' to 'Bit', which is not a built-in scalar"
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"{NOT_GENERATED}{message}\n")
    assert snapshot(schema) == before


# -- publish graphql-config -----------------------------------------------------------------------

def test_publish_graphql_config_writes_the_config_file_with_the_defaults(app_dir):
    result = restify(app_dir, "publish", "graphql-config")
    config = app_dir / "graphql.toml"
    assert (result.returncode, result.stdout, result.stderr) == (0, f"Wrote {config}\n", "")
    assert config.read_text() == PUBLISHED
    assert tomllib.loads(config.read_text()) == DEFAULTS
    assert set(DEFAULTS) == {"types", "repositories", "output", "schema"}


def test_publish_refuses_to_overwrite_the_config_without_force(app_dir):
    config = app_dir / "graphql.toml"
    config.write_text("# mine\n")
    result = restify(app_dir, "publish", "graphql-config")
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"restify: {config} already exists; use --force to overwrite it\n")
    assert config.read_text() == "# mine\n"


def test_publish_with_force_overwrites_the_config(app_dir):
    config = app_dir / "graphql.toml"
    config.write_text("# mine\n")
    result = restify(app_dir, "publish", "graphql-config", "--force")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"Wrote {config}\n", "")
    assert config.read_text() == PUBLISHED


def test_the_published_config_generates_the_same_schema_as_no_config(app_dir):
    restify(app_dir, "publish", "graphql-config")
    generate(app_dir)
    assert (app_dir / "schema" / "schema.graphql").read_text() == EXPECTED.read_text()
