"""`restify graphql:generate` and a schema file edited by hand."""
import shutil

import pytest

from tests.processes import ROOT, restify


@pytest.fixture
def app_dir(app_copy):
    return app_copy


def add_tag_field(app_dir, name: str) -> None:
    module = app_dir / "repositories" / "tags.py"
    module.write_text(module.read_text().replace(".searchable().sortable()",
                                                 f'.searchable().sortable(), field("{name}").nullable()', 1))


def generate(app_dir, *extra: str):
    return restify("graphql:generate", "--quiet", *extra, app_dir=app_dir)


def test_a_schema_edited_by_hand_is_kept_without_force(app_dir):
    assert generate(app_dir).returncode == 0
    schema = app_dir / "schema" / "schema.graphql"
    edited = schema.read_text() + "\n# my own note\n"
    schema.write_text(edited)
    add_tag_field(app_dir, "color")
    result = generate(app_dir)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"restify: schema not generated: {schema} was edited by hand; use --force to overwrite it\n")
    assert schema.read_text() == edited
    forced = generate(app_dir, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "color: String" in schema.read_text() and "my own note" not in schema.read_text()
    add_tag_field(app_dir, "shade")  # written by the generator again: updated without --force
    assert generate(app_dir).returncode == 0
    assert "shade: String" in schema.read_text()


def test_a_schema_the_generator_wrote_is_updated_without_force(app_dir):
    assert generate(app_dir).returncode == 0
    add_tag_field(app_dir, "color")
    result = generate(app_dir)
    schema = app_dir / "schema" / "schema.graphql"
    assert (result.returncode, result.stdout, result.stderr) == (0, f"restify: regenerated {schema}\n", "")
    assert "color: String" in schema.read_text()


def test_a_checked_in_schema_is_adopted_when_it_matches_and_then_followed(app_dir):
    """A fresh clone has schema.graphql but no local record: an identical file is the generator's."""
    (app_dir / "schema").mkdir()
    schema = app_dir / "schema" / "schema.graphql"
    shutil.copyfile(ROOT / "schema" / "schema.graphql", schema)
    assert generate(app_dir).returncode == 0
    add_tag_field(app_dir, "color")
    assert generate(app_dir).returncode == 0
    assert "color: String" in schema.read_text()


def test_a_schema_without_a_record_that_differs_is_kept(app_dir):
    (app_dir / "schema").mkdir()
    schema = app_dir / "schema" / "schema.graphql"
    schema.write_text("type Query { hello: String }\n")
    result = generate(app_dir)
    assert result.returncode == 1 and "was edited by hand; use --force to overwrite it" in result.stderr
    assert schema.read_text() == "type Query { hello: String }\n"
