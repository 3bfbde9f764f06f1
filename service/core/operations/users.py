"""The application's user repository, and a user by email (as the `email` rule stores it): what
registration, login, tokens and accounts by mail share."""
from typing import Any

from service.core.declarations import Resource, Restify, email_key
from service.core.kernel import BadRequest
from storage import Filter


def user_repository(app: Restify) -> Resource:
    """The application's user repository; a 400 when it has none."""
    resource = app.user_resource
    if resource is None:
        raise BadRequest("This application has no user repository.")
    return resource


async def find_by_email(app: Restify, resource: Resource, email: str) -> dict[str, Any] | None:
    # Stored as the `email` rule leaves it.
    return await app.collection(resource).find_one(Filter(equals={"email": email_key(email)}))
