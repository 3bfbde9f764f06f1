"""The logged-in user's own record: shown and updated through the user repository
when it agrees (`can_use_for_profile`), else through a minimal safe fallback.

Profile routes answer the user about themselves, so they need a user but no
policy: nobody else's record can be reached through them.
"""
from typing import Any

from service.core import loading, tokens, uploads
from service.core.app import Restify
from service.core.context import Context
from service.core.errors import Unauthenticated
from service.core.fields import Field, field
from service.core.operations import now, save, serialize
from service.core.query import check_parameter_names, parse_related, relatable_per_page
from service.core.registry import Resource
from service.core.serializer import resource_object
from service.core.validation import validate_request


def _fallback_fields() -> list[Field]:
    return [field("name").rules("max:255"),
            field("email").rules("email", "max:255", "unique:users,email").updating_rules("current_password")]


def _repository(app: Restify, context: Context) -> Resource | None:
    resource = app.user_resource
    if resource is not None and type(resource.repository).can_use_for_profile(context):
        return resource
    return None


def _user_document(context: Context) -> dict[str, Any]:
    if context.user is None:
        raise Unauthenticated()
    return dict(context.user.attributes)


async def show(app: Restify, context: Context) -> dict[str, Any]:
    context.action = "profile"
    document = _user_document(context)
    resource = _repository(app, context)
    if resource is None:
        return resource_object(app.settings.get("auth", "user_repository"), _fallback_fields(), document)
    check_parameter_names(context.params)
    tree = loading.with_eager(resource, parse_related(resource, context.params,
                                                       int(app.settings.get("query", "max_related_depth") or 3)))
    cap = relatable_per_page(context.params, app.settings)
    related = await loading.load(app, resource, context, [document], tree, cap=cap) if tree else {}
    return serialize(app, resource, context, document, related.get(document["id"]))


async def update(app: Restify, payload: dict[str, Any], context: Context,
                 files: dict[str, uploads.Upload] | None = None) -> dict[str, Any]:
    context.action = "update"
    document = _user_document(context)
    resource = _repository(app, context)
    users = resource or app.registry.get(app.settings.get("auth", "user_repository"))
    await app.ready()
    fields = resource.fields(context) if resource else _fallback_fields()
    values, pending = await validate_request(app, fields, payload, "update", record_id=document["id"], files=files,
                                             existing=document, acting=context.user)
    values["updated_at"] = now()
    if users is None:
        raise Unauthenticated()
    updated = await save(app, users, fields, values, pending, document["id"], document)
    await tokens.after_user_update(app, users, fields, values, document["id"], context)
    context.user = users.model(updated)
    if resource is None:
        return resource_object(users.name, _fallback_fields(), updated)
    return serialize(app, resource, context, updated)
