"""`restify repository <Name>Repository`: writes a repository bound to its model by name."""
import re
from pathlib import Path

from service.core.naming import snake

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
    lines.append(f"Register a policy for {model} in {folder / 'policies.py'} (POLICIES); "
                 "until then every operation on it is denied.")
    return lines
