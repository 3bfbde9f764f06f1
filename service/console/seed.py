"""`restify seed`: runs the application's seeder, `<package>/seeders.py` with `async def seed(seeder)`.

The seeder writes through the operations layer (`service.core.operations.seeding.Seeder`), so only the
repositories the application declares are written, validated as the API would. A database where
any of those collections holds records is left alone unless `fresh` drops them first.
"""
import importlib
import inspect
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from service.config import Settings
from service.console.runtime import ApplicationError, located_error
from service.core.declarations.app import Restify
from service.core.kernel.errors import ValidationFailed
from service.core.operations.seeding import Seeder
from storage import Filter

SeedFunction = Callable[[Seeder], Awaitable[None]]


def seeder_path(settings: Settings) -> Path:
    return settings.app_dir / settings.get("app", "package") / "seeders.py"


def find_seeder(settings: Settings) -> SeedFunction | None:
    """The application's `seed` function, None without a seeders module; a broken one is an
    ApplicationError at its file and line. Call after `load_app`, which put the package on the path."""
    path = seeder_path(settings)
    if not path.is_file():
        return None
    try:
        module = importlib.import_module(f"{settings.get('app', 'package')}.seeders")
    except Exception as error:
        raise ApplicationError(located_error(error, settings.app_dir)) from error
    function = getattr(module, "seed", None)
    if not inspect.iscoroutinefunction(function):
        raise ApplicationError(f"{path}:1: defines no `async def seed(seeder)`")
    return function


async def _counts(app: Restify, collections: list[str]) -> dict[str, int]:
    return {name: await app.db.collection(name).count(Filter()) for name in collections}


async def run_seeder(app: Restify, seed: SeedFunction, fresh: bool = False, scale: float = 1.0) -> str:
    """Seeds and returns the line to print; raises ApplicationError when the seeder fails."""
    collections = sorted({resource.collection for resource in app.registry.resources.values()})
    before = await _counts(app, collections)
    if fresh:
        for name in collections:
            await app.db.collection(name).drop()
        before = dict.fromkeys(collections, 0)
    elif any(before.values()):
        held = ", ".join(f"{n} {name}" for name, n in before.items() if n)
        return (f"The database is already seeded ({held}); nothing written. "
                "`restify seed --fresh` drops the application's collections and seeds again.")
    try:
        await seed(Seeder(app, scale=scale))
    except Exception as error:  # the seeder is the author's code: where it failed, and why
        detail = f" {json.dumps(error.errors)}" if isinstance(error, ValidationFailed) else ""
        raise ApplicationError(located_error(error, app.settings.app_dir) + detail) from error
    after = await _counts(app, collections)
    written = ", ".join(f"{after[name] - before[name]} {name}" for name in collections if after[name] != before[name])
    return f"Seeded {written or 'nothing'}."
