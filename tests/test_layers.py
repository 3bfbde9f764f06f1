"""The import rules of the layout, read from the source with `ast` (imports inside functions count):
storage <- service/core <- the doors <- service/console and service/cli."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ("motor", "pymongo", "bson", "gridfs")
DOORS = ("service.http", "service.graphql", "service.mcp", "service.openapi")
TOP = ("service.console", "service.cli")


def imports(package: str) -> dict[str, set[str]]:
    """For each module file under `package` (a dotted name), the modules it imports."""
    found = {}
    for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}: relative import"
                names |= {node.module or ""} | {f"{node.module}.{alias.name}" for alias in node.names}
        found[str(path.relative_to(ROOT))] = names
    return found


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def offending(package: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    return {path: sorted(n for n in names if within(n, forbidden))
            for path, names in imports(package).items() if any(within(n, forbidden) for n in names)}


@pytest.mark.parametrize("package", ["service", "worker", "repositories"])
def test_only_storage_imports_the_driver(package):
    assert offending(package, DRIVER) == {}


def test_storage_imports_nothing_of_the_service():
    assert offending("storage", ("service", "worker")) == {}


def test_core_imports_no_door_and_nothing_above():
    assert offending("service.core", DOORS + TOP) == {}


@pytest.mark.parametrize("door", DOORS)
def test_no_door_imports_storage_or_the_top(door):
    assert offending(door, ("storage",) + TOP) == {}


def test_the_shared_plumbing_imports_no_other_door():
    assert offending("service.http", tuple(d for d in DOORS if d != "service.http")) == {}


@pytest.mark.parametrize("door", ["service.graphql", "service.mcp", "service.openapi"])
def test_a_door_builds_on_the_plumbing_but_imports_no_other_door(door):
    others = tuple(d for d in DOORS if d not in (door, "service.http"))
    assert offending(door, others) == {}
    assert offending(door, ("service.http.handlers", "service.http.routes", "service.http.events")) == {}
