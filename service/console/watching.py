"""`restify watch` and the live part of `restify serve --watch`.

The worker regenerates schema/ in a fresh process; the web process follows
schema/ (written by that worker, in-process or separate) and swaps in the new
repositories and GraphQL schema without a restart. A module with an error keeps
the last good state: the generator fails, nothing in schema/ changes, nothing
reloads.
"""
import asyncio
import gc
import logging
import sys
from pathlib import Path

from watchfiles import awatch

from service.config import Settings
from service.console.runtime import ApplicationError, load_registry
from service.core.declarations.app import Restify
from service.graphql.config import load_graphql_config
from service.graphql.service import GraphQLService
from worker.watch import watch as watch_folders

log = logging.getLogger("restify.watch")


def generator_command(settings: Settings) -> list[str]:
    return [sys.executable, "-m", "service.cli", "--app-dir", str(settings.app_dir), "graphql:generate", "--quiet"]


def watched_paths(settings: Settings) -> list[Path]:
    app_dir = settings.app_dir
    return [app_dir / settings.get("app", "package"), app_dir / "restify.toml", app_dir / "graphql.toml"]


async def run_worker(settings: Settings, stop: asyncio.Event | None = None) -> None:
    await watch_folders(watched_paths(settings), generator_command(settings), stop=stop)


def watch(settings: Settings) -> int:
    print(f"Watching {settings.app_dir / settings.get('app', 'package')} for changes", flush=True)
    try:
        asyncio.run(run_worker(settings))
    except KeyboardInterrupt:
        pass
    return 0


def reload(app: Restify, graphql: GraphQLService) -> bool:
    """New repositories and schema, or (on any error) the old ones, untouched."""
    try:
        registry = load_registry(app.settings)
    except ApplicationError as error:
        log.error("repositories not reloaded, keeping the previous ones: %s", error)
        return False
    app.swap_registry(registry)
    graphql.reload()
    if gc.get_freeze_count():
        # `serve` froze its start-up objects, the replaced registry and schema among them: frozen
        # objects are never collected, so thaw, let the collector take the old ones, freeze again.
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    log.info("reloaded repositories: %s", ", ".join(sorted(registry.resources)))
    return True


async def follow_schema(app: Restify, graphql: GraphQLService, stop: asyncio.Event | None = None) -> None:
    """Reloads whenever schema/ changes on disk, whoever wrote it."""
    output = load_graphql_config(app.settings.app_dir).output_dir
    output.mkdir(parents=True, exist_ok=True)
    async for _ in awatch(output, debounce=50, stop_event=stop, recursive=True):
        reload(app, graphql)
