"""Tokens as a resource: a user lists, creates and revokes their own bearer tokens.

    GET <auth>/tokens         every token of the user: id, name, abilities, created_at, last_used_at,
                              expires_at, current (the one the request came with); never a secret
    POST <auth>/tokens        {name, abilities, expires_in}: a personal access token, its secret shown once
    DELETE <auth>/tokens/<id> one of the user's own tokens (another's is as missing as one that never was)

None of these needs an ability of a repository: they are the user's own. A token cannot make one
that may do more than itself: each ability asked for must be one it holds (MissingAbility names the
first that is not), so a leaked narrow token cannot mint a wide one.
"""
import json
from typing import Any

from service.core.declarations import EVERYTHING, READ, WRITE, Context, Model, Restify, field
from service.core.identity import described, issue_token, revoke_token, tokens_of
from service.core.kernel import NotFound, Unauthenticated, ValidationFailed
from service.core.operations.actions import Action
from service.core.operations.extensions import declared
from service.core.writing import validate
from storage import is_valid_id

ABILITIES = "abilities"
MAX_ABILITIES = 100
MAX_EXPIRES_IN = 10 * 365 * 24 * 3600  # ten years, in seconds


def _user(context: Context) -> Model:
    if context.user is None:
        raise Unauthenticated()
    return context.user


def _fields() -> list:
    return [field("name").required().rules("max:255"),
            field("expires_in").numeric().nullable().rules("integer", "min:1", f"max:{MAX_EXPIRES_IN}")]


async def listing(app: Restify, context: Context) -> dict[str, Any]:
    user = _user(context)
    return {"data": [described(t, user._token_id) for t in await tokens_of(app, user.id)]}


async def create(app: Restify, payload: dict[str, Any], context: Context) -> dict[str, Any]:
    """A new token of the user: `{"data": <the token as listed>, "meta": {"token": "<id>|<secret>"}}`.
    `abilities` defaults to those of the token that asks; `expires_in` (seconds) to `auth.token_ttl`."""
    app = app.pinned()
    user = _user(context)
    errors: dict[str, list[str]] = {}
    try:
        values = await validate(app, _fields(), payload, "store", acting=user)
    except ValidationFailed as error:
        errors, values = dict(error.errors), {}
    asked = payload.get(ABILITIES)
    asked = list(context.abilities or [EVERYTHING]) if asked is None else asked
    try:
        abilities = checked_abilities(app, asked, context)
    except ValidationFailed as error:
        errors.update(error.errors)
    if errors:
        raise ValidationFailed(errors)
    for ability in abilities:
        context.require(ability)  # never more than the asking token may do
    expires_in = values.get("expires_in")
    plain, stored = await issue_token(app, user.id, values["name"], abilities,
                                      int(expires_in) if expires_in is not None else None)
    return {"data": described(stored, user._token_id), "meta": {"token": plain}}


async def revoke(app: Restify, id: str, context: Context) -> None:
    user = _user(context)
    if not is_valid_id(id) or not await revoke_token(app, user.id, id):
        raise NotFound()


def checked_abilities(app: Restify, asked: Any, context: Context) -> list[str]:
    """`asked` as a list of abilities, each `*` or `<repository>:<read|write|action key>` of a repository
    and action this application has; ValidationFailed (`errors.abilities`) names the first that is not."""
    if not isinstance(asked, list) or not all(isinstance(a, str) for a in asked) or not asked:
        raise _refused("The abilities must be a non-empty list of strings.")
    if len(asked) > MAX_ABILITIES:
        raise _refused(f"The abilities may not have more than {MAX_ABILITIES} items.")
    for ability in asked:
        problem = _problem(app, ability, context)
        if problem:
            raise _refused(problem)
    return list(dict.fromkeys(asked))


def _problem(app: Restify, ability: str, context: Context) -> str | None:
    if ability == EVERYTHING:
        return None
    name, colon, kind = ability.partition(":")
    quoted = json.dumps(ability)
    if not colon or not name or not kind:
        return f'The ability {quoted} is not "*" or "<repository>:<read, write or an action>".'
    resource = app.registry.get(name)
    if resource is None:
        return f"The ability {quoted} names no repository."
    if kind in (READ, WRITE) or kind in {a.key for a in declared(resource, "actions", Action, context)}:
        return None
    return f"The ability {quoted} is not read, write or an action of {name}."


def _refused(message: str) -> ValidationFailed:
    return ValidationFailed({ABILITIES: [message]})
