"""The logged-in user's own record: shown and updated through the user repository
when it agrees (`can_use_for_profile`), else through a minimal safe fallback.

Profile routes answer the user about themselves, so they need a user but no
policy: nobody else's record can be reached through them.
"""
from typing import Any

from service.core.declarations import Context, Field, Resource, Restify, field
from service.core.identity import pace_writes
from service.core.kernel import Unauthenticated
from service.core.reading import apply_fieldsets, asked_relations, parse_fieldsets, resource_object, with_relations
from service.core.writing import Upload, Write, write


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
    app = app.pinned()
    context.action = "profile"
    document = _user_document(context)
    resource = _repository(app, context)
    if resource is None:
        return resource_object(app.settings.get("auth", "user_repository"), _fallback_fields(), document)
    asked, chosen = asked_relations(app, resource, context), parse_fieldsets(app, resource, context)
    data = await with_relations(app, resource, context, document, asked, chosen)
    apply_fieldsets(data, chosen)
    return data


async def update(app: Restify, payload: dict[str, Any], context: Context,
                 files: dict[str, Upload] | None = None) -> dict[str, Any]:
    app = app.pinned()
    context.action = "update"
    document = _user_document(context)
    resource = _repository(app, context)
    users = resource or app.registry.get(app.settings.get("auth", "user_repository"))
    if users is None:
        raise Unauthenticated()
    await pace_writes(app, context)
    await app.ready()
    fields = resource.fields(context) if resource else _fallback_fields()
    # Through the fallback the answer is the safe fields alone, without the policy's flags.
    written = await write(Write(app, users, fields, context, payload, action="update", existing=document,
                                files=files, flags=resource is not None, acts_as_written=True))
    return written.data
