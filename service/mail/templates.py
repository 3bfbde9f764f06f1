"""Mail templates: `<name>.txt` (its first line `Subject: ...`, then the plain text) and `<name>.html`.

An application overrides one by putting a file of the same name in `templates/mail/` of its directory;
the others stay the framework's (`service/mail/defaults/`). Placeholders are `$name` or `${name}`
(`string.Template`); the HTML's values are escaped, and an unknown placeholder is left as written.
"""
import html
from dataclasses import dataclass
from pathlib import Path
from string import Template

from service.config import Settings

DEFAULTS = Path(__file__).resolve().parent / "defaults"
OVERRIDES = Path("templates") / "mail"


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str | None


def _source(settings: Settings, file_name: str) -> str | None:
    for folder in (settings.app_dir / OVERRIDES, DEFAULTS):
        path = folder / file_name
        if path.is_file():
            return path.read_text()
    return None


def render(settings: Settings, name: str, values: dict[str, str]) -> Rendered:
    """The subject, text and HTML of template `name` with `values` filled in."""
    text = _source(settings, f"{name}.txt")
    if text is None:
        raise LookupError(f"no mail template {name}.txt")
    filled = Template(text).safe_substitute(values)
    first, _, body = filled.partition("\n")
    subject = first.removeprefix("Subject:").strip() if first.startswith("Subject:") else name.replace("_", " ")
    page = _source(settings, f"{name}.html")
    escaped = {key: html.escape(value) for key, value in values.items()}
    return Rendered(subject, (body if first.startswith("Subject:") else filled).lstrip("\n"),
                    Template(page).safe_substitute(escaped) if page is not None else None)
