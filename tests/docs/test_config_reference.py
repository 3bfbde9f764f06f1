"""The settings reference on docs/configuration.md is generated from service/config.py (DEFAULTS and
MEANINGS) by docs/gen_config.py: every setting has a meaning, and the page says what the code says."""
import importlib.util
from pathlib import Path

from service.config import DEFAULTS, MEANINGS

ROOT = Path(__file__).resolve().parent.parent.parent


def gen_config():
    spec = importlib.util.spec_from_file_location("gen_config", ROOT / "docs" / "gen_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_setting_has_a_one_line_meaning():
    settings = {f"{section}.{key}" for section, items in DEFAULTS.items() for key in items}
    assert settings == set(MEANINGS)
    assert all(text.strip() and "\n" not in text for text in MEANINGS.values())
    assert gen_config().problems() == []


def test_the_configuration_page_is_generated_from_the_settings():
    generator = gen_config()
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert generator.render(page) == page, "docs/configuration.md is stale: run python docs/gen_config.py"
    for section, items in DEFAULTS.items():
        for key in items:
            assert f"| `{section}.{key}` |" in page


def test_a_setting_without_a_meaning_is_found(monkeypatch):
    generator = gen_config()
    monkeypatch.setitem(generator.DEFAULTS, "extra", {"new_key": 1})
    assert generator.problems() == ["extra.new_key: no meaning in service/config.py MEANINGS"]
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert generator.render(page) != page  # the new setting would be a new row
