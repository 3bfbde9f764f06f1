"""`restify new DIR`: writes a runnable application from `app_template/`.

Template files end in `.tmpl` (so nothing here is imported or collected as a test); a leading `dot-`
stands for `.`, and `{{name}}` becomes the directory's name.
"""
from pathlib import Path

TEMPLATE = Path(__file__).with_name("app_template")


def _target_name(template: Path) -> Path:
    relative = template.relative_to(TEMPLATE).with_suffix("")  # drop .tmpl
    name = relative.name
    return relative.with_name("." + name[len("dot-"):] if name.startswith("dot-") else name)


def write_app(directory: Path) -> list[str]:
    """Returns the lines to print; raises ValueError for a directory that is not empty."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ValueError(f"{directory} is not empty; `restify new` writes only into a new or empty directory")
    written = []
    for template in sorted(TEMPLATE.rglob("*.tmpl")):
        target = directory / _target_name(template)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.read_text().replace("{{name}}", directory.name))
        written.append(target.relative_to(directory))
    return [f"Created {directory}: " + ", ".join(sorted(str(path) for path in written)),
            f"Next: cd {directory} && restify serve   (then `python -m pip install -r requirements-dev.txt` "
            "once, and `python -m pytest` runs its smoke test)"]
