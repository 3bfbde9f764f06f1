"""Assembles the OpenAPI 3.1 document from a registry and the settings."""
import json
import weakref
from importlib import metadata
from typing import Any

from service.config import Settings
from service.core.declarations.registry import Registry
from service.openapi import accounts, actions, aggregates, bulk, paths, resources, tokens
from service.openapi.components import components

OPENAPI_VERSION = "3.1.0"
DESCRIPTION = """\
The repositories of this application as a JSON REST API (Restify for Python).

Errors are JSON whatever the Accept header: 400 malformed JSON or query, 401 `Unauthenticated.`, 403
`This action is unauthorized.` (or, code `MISSING_ABILITY`, a token whose abilities do not cover the
operation), 404 `Not found.`, 405 a method the path does not take, 413 a body above the
limit, 414 a query string above the limit, 422 field errors, 429 too many failed logins, writes past
the user's pace (`throttle.writes_per_minute`) or an expensive query while its turns are taken
(`Retry-After`), 503 the database is unreachable, or the server is busy sending other large answers
(`Retry-After`). No stack traces, ever.

Send `Authorization: Bearer <token>` (from /register, /login or POST /tokens; each token carries
abilities: `*`, `<repository>:read`, `<repository>:write`, `<repository>:<action key>`). Repository routes
admit guests unless `routes.middleware` contains `auth:token`; policies decide the rest (a refused guest
gets 401, a user 403).
Bodies are JSON objects; keys that are not writable fields are ignored. Numbers and booleans may also be
sent as text (what forms send), and an empty string means "no value" for typed fields."""


def _version() -> str:
    try:
        return metadata.version("restify-python")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _info(settings: Settings) -> dict[str, Any]:
    """The document's title, version and description, and the license the deployer offers the API under."""
    # An SPDX expression names the license; `LicenseRef-<name>` is SPDX's form for terms of one's own.
    identifier = str(settings.value("openapi", "license"))
    license = {"name": identifier.removeprefix("LicenseRef-")}
    url = settings.value("openapi", "license_url")
    license.update({"url": str(url)} if url else {"identifier": identifier})  # OpenAPI allows one of the two
    return {"title": str(settings.value("openapi", "title")), "version": _version(),
            "description": DESCRIPTION, "license": license}


def build_document(registry: Registry, settings: Settings) -> dict[str, Any]:
    """The whole document: every repository's routes and schemas, profile, auth, files."""
    ordered = [registry.resources[name] for name in sorted(registry.resources)]
    schemas: dict[str, Any] = {}
    path_items: dict[str, Any] = {}
    for resource in ordered:
        schemas.update(resources.schemas(resource))
        schemas.update(bulk.schemas(resource, settings))
        path_items.update(paths.repository_paths(resource, settings))
        path_items.update(paths.relation_change_paths(resource, settings))
        if aggregates.offers(resource):  # aggregations, for repositories that declare group keys or metrics
            schemas.update(aggregates.schemas(resource))
            path_items.update(aggregates.paths(resource, settings, paths.TOKEN if settings.requires_user
                                               else paths.OPTIONAL_TOKEN))
        if actions.has_extensions(resource):  # actions and getters, for repositories that declare any
            schemas.update(actions.schemas(resource))
            path_items.update(actions.paths(resource, settings, paths.TOKEN if settings.requires_user
                                            else paths.OPTIONAL_TOKEN))
    schemas.update(paths.profile_schemas(registry, settings))
    schemas.update(paths.auth_schemas(registry, settings))
    schemas.update(accounts.schemas())
    path_items.update(paths.profile_paths(registry, settings))
    path_items.update(paths.auth_paths(settings))
    if registry.get(settings.get("auth", "user_repository")) is not None:  # tokens belong to users
        schemas.update(tokens.schemas())
        path_items.update(tokens.paths(settings))
    path_items.update(accounts.paths(settings, paths.TOKEN, paths.NO_TOKEN))
    path_items.update(paths.file_paths(settings))
    path_items.update(paths.document_path(settings))
    shared = components()
    shared["schemas"].update({**actions.shared_schemas(), **schemas})
    tags = [{"name": r.name, "description": f"The {r.name} repository."} for r in ordered]
    tags += [{"name": "profile", "description": "The logged-in user's own record."},
             {"name": "auth", "description": "Accounts and bearer tokens."},
             {"name": "files", "description": "Stored uploads."},
             {"name": "meta", "description": "This description of the API."}]
    return {
        "openapi": OPENAPI_VERSION,
        "info": _info(settings),
        # Relative: the host that serves this document (paths carry their full prefix).
        "servers": [{"url": "/", "description": "The server this document is served from."}],
        "tags": tags,
        "paths": path_items,
        "components": shared,
    }


_CACHE: "weakref.WeakKeyDictionary[Registry, tuple[str, str]]" = weakref.WeakKeyDictionary()


def document_json(registry: Registry, settings: Settings) -> str:
    """The document as JSON text, cached per registry object (and settings), so a live reload
    (`Restify.swap_registry`) is followed at the next request."""
    key = json.dumps(settings.values, sort_keys=True, default=str)
    cached = _CACHE.get(registry)
    if cached is not None and cached[0] == key:
        return cached[1]
    text = json.dumps(build_document(registry, settings), indent=2)
    _CACHE[registry] = (key, text)
    return text
