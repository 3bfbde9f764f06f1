"""`restify repository <Name>Repository`: writes a repository bound to its model by name."""
import re
from pathlib import Path

from service.core.kernel.naming import snake

TEMPLATE = '''from service import Repository, field


class {repository}(Repository):
    """Serves {model} records; its model is found by name in repositories.models."""

    def fields(self, request):
        return [
            field("name").required().rules("max:255").searchable().sortable(),
        ]
'''

MODEL_TEMPLATE = '''

class {model}(Model):
    pass
'''

POLICY_TEMPLATE = Path(__file__).with_name("policy_stub.tmpl")  # a file: `{model}` is filled in
RESTART = ("A running `restify serve` answers 404 for it until restarted; `restify serve --watch` (or a "
           "`restify watch` worker beside it, as in the Procfile) serves it without a restart.")


def write_repository(app_dir: Path, class_name: str, package: str = "repositories") -> list[str]:
    """Returns the lines to print; raises ValueError for a bad name or an existing file."""
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*Repository", class_name) or class_name == "Repository":
        raise ValueError(f"{class_name!r} is not a repository class name like PostRepository")
    model = class_name[: -len("Repository")]
    folder = app_dir / package
    target = folder / f"{snake(model)}.py"
    if target.exists():
        raise ValueError(f"{target} already exists; not overwriting it")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").touch(exist_ok=True)
    target.write_text(TEMPLATE.format(repository=class_name, model=model))
    lines = [f"Created {target}"]
    models = folder / "models.py"
    text = models.read_text() if models.exists() else "from service import Model\n"
    if not re.search(rf"^class {model}\(", text, re.MULTILINE):
        models.write_text(text.rstrip("\n") + "\n" + MODEL_TEMPLATE.format(model=model))
        lines.append(f"Added model {model} to {models}")
    lines.append(_add_policy(folder / "policies.py", package, model))
    # A plain `restify serve` loads the repositories once: without this line the new one is a silent 404.
    lines.append(RESTART)
    return lines


def _add_policy(policies: Path, package: str, model: str) -> str:
    """Appends a policy stub for `model` to the POLICIES map, or says how when the file is not one
    this can extend safely (no module-level `POLICIES = {...}`)."""
    text = policies.read_text() if policies.exists() else ("from service import Policy\n"
                                                              f"from {package}.models import {model}\n\n"
                                                              "POLICIES = {}\n")
    if re.search(rf"^POLICIES\[{model}\]|^\s*{model}: ", text, re.MULTILINE):
        return f"{policies} already names a policy for {model}"
    if not re.search(r"^POLICIES\s*=", text, re.MULTILINE) or not re.search(r"^from service import .*\bPolicy\b",
                                                                           text, re.MULTILINE):
        return (f"Register a policy for {model} in {policies} (POLICIES = {{{model}: ...}}); "
                "until then every operation on it is denied.")
    if not re.search(rf"^from {re.escape(package)}\.models import .*\b{model}\b", text, re.MULTILINE):
        text = _import_model(text, package, model)
    policies.write_text(text.rstrip("\n") + "\n\n\n" + POLICY_TEMPLATE.read_text().format(model=model))
    return f"Added {model}Policy to {policies}: anyone reads, logged-in users store, nobody updates or deletes yet"


def _import_model(text: str, package: str, model: str) -> str:
    """Adds `model` to the one-line `from <package>.models import ...`, or a new import after `from service ...`."""
    line = re.search(rf"^from {re.escape(package)}\.models import [^(\n]+$", text, re.MULTILINE)
    if line:
        return text[:line.end()] + f", {model}" + text[line.end():]
    anchor = re.search(r"^from service import .*$", text, re.MULTILINE)
    assert anchor is not None  # checked by the caller
    return text[:anchor.end()] + f"\nfrom {package}.models import {model}" + text[anchor.end():]
