"""The import rules of the layout, read from the source with `ast` (imports inside functions count):
storage <- service/core <- the doors <- service/console and service/cli.

Inside core, its layers: each package imports only the packages below it, and those only through
their package (what its `__init__` exports), never through one of their modules.

    kernel <- declarations <- reading <- identity <- writing <- describing <- operations <- live

A module imports the modules of its own package by their module path. The figures the core keeps
(fewer than 3.5 import arrows per module, no module over 300 lines) are checked here too, so that
a change that breaks them says so. docs/architecture.md explains the layers and where each rule lives.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ("motor", "pymongo", "bson", "gridfs")
DOORS = ("service.http", "service.graphql", "service.mcp", "service.openapi")
TOP = ("service.console", "service.cli")
LAYERS = ("kernel", "declarations", "reading", "identity", "writing", "describing", "operations", "live")
MAX_ARROWS_PER_MODULE = 3.5
MAX_LINES = 300


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


# -- inside core: its layers -----------------------------------------------------------------------
def _imports(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every `from service.core... import` in the file, at any depth
    (a function's import and a TYPE_CHECKING import are dependencies too)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("service.core"):
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names if alias.name.startswith("service.core")]
    return found


def violations(core: Path) -> list[str]:
    """What breaks the layering under `core` (a `service/core` folder), one line each."""
    problems = []
    loose = sorted(p.name for p in core.iterdir() if p.suffix == ".py" and p.name != "__init__.py")
    problems += [f"{name}: a core module outside the layer packages" for name in loose]
    unknown = sorted(p.name for p in core.iterdir() if p.is_dir() and p.name not in LAYERS and p.name != "__pycache__")
    problems += [f"{name}/: a package that is not a layer" for name in unknown]
    for path in sorted(core.glob("*/*.py")):
        layer = path.parent.name
        if layer not in LAYERS:
            continue
        where = f"{layer}/{path.name}"
        for line, module, _ in _imports(ast.parse(path.read_text())):
            parts = module.split(".")
            if len(parts) < 3:
                problems.append(f"{where}:{line}: imports service.core itself; name a layer")
                continue
            target = parts[2]
            if target not in LAYERS:
                problems.append(f"{where}:{line}: imports {module}, which is in no layer")
            elif LAYERS.index(target) > LAYERS.index(layer):
                problems.append(f"{where}:{line}: {layer} imports {target}, a layer above it")
            elif target != layer and len(parts) > 3:
                problems.append(f"{where}:{line}: imports {module}; import from service.core.{target}")
            elif path.name == "__init__.py" and target != layer:
                problems.append(f"{where}:{line}: a layer package exports its own modules only")
    return problems


def arrows(core: Path) -> tuple[int, int]:
    """(import arrows, modules) inside core: each module (a package's __init__ too) -> each distinct
    module or package it imports from; `from <package> import <module>` points at the module."""
    modules = {".".join(p.relative_to(core).with_suffix("").parts).removesuffix(".__init__"): p
               for p in core.rglob("*.py") if p.parent != core}
    count = 0
    for name, path in modules.items():
        targets = set()
        for _, module, names in _imports(ast.parse(path.read_text())):
            inside = module.removeprefix("service.core").lstrip(".")
            for imported in names or [""]:
                full = f"{inside}.{imported}"
                targets.add(full if full in modules else inside)
        targets.discard(name)
        count += len(targets)
    return count, len(modules)


def test_core_keeps_its_layers() -> None:
    assert violations(ROOT / "service" / "core") == []


def test_core_keeps_its_figures() -> None:
    core = ROOT / "service" / "core"
    count, modules = arrows(core)
    assert count / modules < MAX_ARROWS_PER_MODULE, f"{count} arrows over {modules} modules"
    long = {str(p.relative_to(core)): n for p in core.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def _core(tmp_path: Path, files: dict[str, str]) -> Path:
    core = tmp_path / "service" / "core"
    for layer in LAYERS:
        (core / layer).mkdir(parents=True)
        (core / layer / "__init__.py").write_text("")
    for name, text in files.items():
        (core / name).write_text(text)
    return core


@pytest.mark.parametrize("files, problem", [
    ({"declarations/models.py": "from service.core.reading.query import IndexQuery\n"},
     "declarations/models.py:1: declarations imports reading, a layer above it"),
    ({"kernel/errors.py": "def f():\n    from service.core.live import feeds\n"},
     "kernel/errors.py:2: kernel imports live, a layer above it"),
    ({"reading/query.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                          "    from service.core.writing import Write\n"},
     "reading/query.py:3: reading imports writing, a layer above it"),
    ({"operations/crud.py": "from service.core.reading.query import IndexQuery\n"},
     "operations/crud.py:1: imports service.core.reading.query; import from service.core.reading"),
    ({"helpers.py": "X = 1\n"}, "helpers.py: a core module outside the layer packages"),
    ({"reading/__init__.py": "from service.core.kernel import NotFound\n"},
     "reading/__init__.py:1: a layer package exports its own modules only"),
])
def test_a_broken_layering_is_named(tmp_path: Path, files: dict[str, str], problem: str) -> None:
    assert violations(_core(tmp_path, files)) == [problem]


def test_imports_that_keep_the_layers_pass(tmp_path: Path) -> None:
    core = _core(tmp_path, {
        "reading/query.py": "from service.core.declarations import Field\nfrom service.core.kernel import errors\n",
        "reading/loading.py": "from service.core.reading.query import IndexQuery\n",
        "reading/__init__.py": "from service.core.reading.query import IndexQuery\n",
    })
    assert violations(core) == []
    assert arrows(core) == (4, 10)  # query -> declarations, query -> kernel.errors; loading -> query; reading -> query


def test_mail_sits_beneath_the_core():
    """`service/mail` (templates, transports, the outbox's sender) uses storage and the settings only: the
    core's operations queue mail through it, `serve` runs its sender."""
    assert offending("service.mail", ("service.core",) + DOORS + TOP) == {}


def test_webhooks_sit_beside_the_doors():
    """`service/webhooks` reads by the core's rules and keeps its deliveries in storage; no door is its, nor
    the commands above: `serve` runs it, the console lists and replays its failures."""
    assert offending("service.webhooks", DOORS + TOP) == {}
