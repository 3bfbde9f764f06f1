"""The GraphQL config file (`graphql.toml` in the app directory), written by
`restify publish graphql-config` and honoured by the generator and the endpoint."""
import copy
import tomllib
from pathlib import Path
from typing import Any

FILE_NAME = "graphql.toml"

DEFAULTS: dict[str, dict[str, Any]] = {
    # Field kind -> GraphQL scalar (the key is `Description.graphql_kind`: the kind, or the type its rules
    # give). "integer" is a field with an `integer` rule whose min/max
    # keep it within 32 bits; "long" one without such bounds (Long: a 64-bit integer written as a string).
    "types": {"string": "String", "textarea": "String", "password": "String", "image": "String",
              "numeric": "Float", "integer": "Int", "long": "Long", "boolean": "Boolean", "date": "String"},
    "repositories": {"include": [], "exclude": []},
    "output": {"path": "schema", "schema_file": "schema.graphql"},
    "schema": {"endpoint": "/graphql", "default_first": 15, "max_depth": 10, "max_cost": 5000,
               "relations": True},
}

PUBLISHED = f'''# GraphQL settings for Restify. `restify graphql:generate` and the /graphql endpoint read this file.

[types]
# The GraphQL scalar for each field kind; "integer" is a field with an `integer` rule and min/max
# rules within 32 bits, "long" one without them (Long: a signed 64-bit integer, a string in JSON).
{chr(10).join(f'{k} = "{v}"' for k, v in DEFAULTS["types"].items())}

[repositories]
# Resource names (e.g. "posts") to put in the schema; an empty include means all of them.
include = []
exclude = []

[output]
path = "schema"
schema_file = "schema.graphql"

[schema]
endpoint = "/graphql"
default_first = 15   # default of `first` on relation fields, and on lists of repositories without per_page
max_depth = 10       # deeper queries are refused
max_cost = 5000      # estimated fields resolved (lists count `first` times) above which a query is refused
relations = true     # expose repository relations as fields
'''


class GraphQLConfig:
    def __init__(self, values: dict[str, dict[str, Any]] | None = None, app_dir: Path | None = None) -> None:
        self.app_dir = Path(app_dir or ".").resolve()
        self.values = copy.deepcopy(DEFAULTS)
        for section, items in (values or {}).items():
            if isinstance(items, dict):
                self.values.setdefault(section, {}).update(items)

    def get(self, section: str, key: str) -> Any:
        return self.values[section][key]

    @property
    def schema_path(self) -> Path:
        return self.output_dir / self.get("output", "schema_file")

    @property
    def output_dir(self) -> Path:
        return (self.app_dir / self.get("output", "path")).resolve()

    def includes(self, resource_name: str) -> bool:
        include, exclude = self.get("repositories", "include"), self.get("repositories", "exclude")
        return (not include or resource_name in include) and resource_name not in exclude


def load_graphql_config(app_dir: str | Path, overrides: dict[str, dict[str, Any]] | None = None) -> GraphQLConfig:
    path = Path(app_dir) / FILE_NAME
    values: dict[str, dict[str, Any]] = {}
    if path.is_file():
        with path.open("rb") as handle:
            values = tomllib.load(handle)
    config = GraphQLConfig(values, Path(app_dir))
    for section, items in (overrides or {}).items():
        config.values.setdefault(section, {}).update(items)
    return config


def publish(app_dir: str | Path, force: bool = False) -> Path:
    path = Path(app_dir) / FILE_NAME
    if path.exists() and not force:
        raise FileExistsError(f"{path} already exists; use --force to overwrite it")
    path.write_text(PUBLISHED)
    return path
