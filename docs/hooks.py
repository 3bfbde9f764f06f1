"""MkDocs hooks (mkdocs.yml `hooks:`): publish bench/README.md beside the pages that link to it, and
refuse to build while docs/configuration.md's settings table is stale (docs/gen_config.py)."""
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


def on_pre_build(config: Any) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_config", Path(__file__).with_name("gen_config.py"))
    assert spec is not None and spec.loader is not None
    gen_config = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_config)
    if gen_config.problems() or gen_config.stale():
        raise PluginError("docs/configuration.md is stale or a setting has no meaning: run python docs/gen_config.py")


def on_files(files: Files, config: Any) -> Files:
    files.append(File("bench/README.md", str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files
