"""Validates a request payload against a repository's fields.

Only declared, writable fields are read; anything else in the payload is
ignored and can never be stored. `action` is "store" (every field, defaults
apply), "update" (PUT: every field, required rules apply) or "patch" (only the
fields sent).
"""
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import voluptuous as vol

from service.core.declarations import DELETED_AT, MESSAGES, Field, FieldRules, Model, describe
from service.core.identity import password_matches
from service.core.kernel import ValidationFailed
from service.core.reading import visibility_of
from service.core.writing import uploads
from storage import Filter, canonical_id

if TYPE_CHECKING:
    from service.core.declarations import Resource, Restify


_COMPILED: dict[tuple, FieldRules] = {}


def compiled_rules(field: Field, action: str) -> FieldRules:
    """Compiled rules, cached by everything that shapes them (fields are rebuilt per request)."""
    mode = "store" if action == "store" else "update"
    key = (describe(field), mode, tuple(sorted(field.message_map.items())))
    rules = _COMPILED.get(key)
    if rules is None:
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        rules = _COMPILED[key] = FieldRules(field, mode)
    return rules


def writable(fields: list[Field]) -> list[Field]:
    """The fields a JSON body may set (`Description.writable`)."""
    return [f for f in fields if describe(f).writable]


def _is_blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _references(app: "Restify", fields: list[Field], action: str) -> set[str]:
    """The fields that hold ids of other records: relation keys (`post_id`, `tag_ids`, named by
    any belongs_to / belongs_to_many of the application) and fields with an `exists:` rule on ids."""
    keys = {relation.local_key for resource in app.registry.resources.values()
            for relation in resource.relations.values() if relation.kind != "has_many"}
    return {field.name for field in fields if field.name in keys or any(
        target.column == "id" for target in describe(field).constraints(action).exists)}


def canonical_references(app: "Restify", fields: list[Field], values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` (e.g. an index's exact filters) with ids of other records in their stored spelling, so a
    filter finds what a write stored whatever case it was sent in."""
    if not values:
        return {}
    referring = _references(app, fields, "store")
    return {name: _canonical_reference(value) if name in referring else value for name, value in values.items()}


def _canonical_reference(value: Any) -> Any:
    """Ids in their stored spelling, one id or a list of them: any accepted spelling finds its record."""
    if isinstance(value, (list, tuple)):  # a tuple: the values of an `in` / `nin` filter
        return type(value)(canonical_id(item) for item in value)
    return canonical_id(value)


async def validate(app: "Restify", fields: list[Field], payload: Mapping[str, Any], action: str,
                   record_id: str | None = None, existing: Mapping[str, Any] | None = None,
                   acting: Model | None = None, proven: bool = False) -> dict[str, Any]:
    """`existing` is the record an update changes and `acting` the user making the request: the
    `current_password` rule compares the one and asks the other's password, unless the user proved
    who they are otherwise (`proven`: a password reset's token)."""
    errors: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}
    checked: list[tuple[Field, FieldRules, Any]] = []
    referring = _references(app, fields, action)
    for field in writable(fields):
        rules = compiled_rules(field, action)
        present = field.name in payload
        if action == "patch" and not present:
            continue
        value = payload.get(field.name)
        if value == "" and not rules.description.is_text:
            value = None  # an empty form value means "no value" for typed fields
        if rules.required and _is_blank(value):
            errors[field.name] = [rules.message("required")]
            continue
        if not present:
            if action == "store" and field.has_default:
                clean[field.name] = field.default_value
            continue
        if value is None and rules.nullable:
            clean[field.name] = None
            continue
        try:
            value = rules.validate(value)
        except vol.Invalid as error:
            errors[field.name] = [str(error.msg)]
            continue
        if rules.confirmed and payload.get(f"{field.name}_confirmation") != payload.get(field.name):
            errors[field.name] = [rules.message("confirmed")]
            continue
        if field.name in referring:
            value = _canonical_reference(value)
        clean[field.name] = value
        checked.append((field, rules, value))
    for field, rules, value in checked:
        message = await _database_rules(app, field, rules, value, record_id, acting)
        if message:
            errors[field.name] = [message]
    changed = [field for field, rules, value in checked if rules.needs_current_password and field.name not in errors
               and (field.kind == "password" or (existing or {}).get(field.name) != value)]
    if changed and action != "store" and not proven:
        message = await _current_password(app, payload.get("current_password"), acting)
        if message:
            errors["current_password"] = [message]
    if errors:
        raise ValidationFailed(errors)
    for field in writable(fields):
        if field.kind == "password" and clean.get(field.name) is not None:
            clean[field.name] = await app.passwords.hash(clean[field.name])
    return clean


async def _database_rules(app: "Restify", field: Field, rules: FieldRules, value: Any,
                          record_id: str | None, acting: Model | None) -> str | None:
    if value is None:
        return None
    for target in rules.database_rules:
        where = Filter(equals={target.column: value})
        if target.rule == "unique" and await _taken(app, target.collection, where, record_id):
            return rules.message("unique")
        elif target.rule == "exists" and await _visible(app, target.collection, where, acting) is None:
            return rules.message("exists")
    return None


async def _taken(app: "Restify", collection: str, where: Filter, record_id: str | None) -> bool:
    """Whether another record holds the value: any record, seen by the user or not (the index holds
    them all), except trashed ones, whose values are free again (a restore checks them anew)."""
    resource = _serving(app, collection)
    if resource is not None and resource.soft_deletes:
        where = replace(where, conditions=(*where.conditions, (DELETED_AT, "null", True)))
    found = await app.db.collection(collection).find_one(where)
    return found is not None and found["id"] != record_id


async def taken_values(app: "Restify", fields: list[Field], document: Mapping[str, Any]) -> dict[str, list[str]]:
    """The 422 errors for the `unique:` values of a stored record that another live record holds:
    what a restore checks before a trashed record takes its values back."""
    errors: dict[str, list[str]] = {}
    for field in fields:
        rules = compiled_rules(field, "update")
        for target in describe(field).update.unique:
            value = document.get(field.name)
            if value is not None and await _taken(app, target.collection, Filter(equals={target.column: value}),
                                                  document.get("id")):
                errors[field.name] = [rules.message("unique")]
    return errors


def _serving(app: "Restify", collection: str) -> "Resource | None":
    return next((r for r in app.registry.resources.values() if r.collection == collection), None)


async def _visible(app: "Restify", collection: str, where: Filter, acting: Model | None) -> dict[str, Any] | None:
    """The record `where` finds if the acting user may read it (scope and `show`): `exists:` must not
    tell a hidden record from a missing one. A collection no repository serves has no read rule."""
    resource = _serving(app, collection)
    if resource is None:
        return await app.db.collection(collection).find_one(where)
    return await visibility_of(app, resource, acting).find_one(where)


async def _current_password(app: "Restify", given: Any, acting: Model | None) -> str | None:
    """Laravel's `current_password`: the acting user's own password, checked in the hashing lane."""
    if not isinstance(given, str) or given == "":
        return MESSAGES["required"].format(attribute="current password")
    hashed = acting.attributes.get("password") if acting is not None else None
    email = acting.attributes.get("email") if acting is not None else None
    hashed = hashed if isinstance(hashed, str) else None
    # Counted as a login attempt of the account, so a stolen token guesses no faster than a login form.
    matches = await password_matches(app, email, None, hashed, given) if isinstance(email, str) \
        else await app.passwords.verify(hashed, given)
    return None if matches else MESSAGES["current_password"]


def unique_message(fields: list[Field], column: str | None) -> dict[str, list[str]]:
    """The 422 errors for a unique index that refused a write (a race the check lost)."""
    for field in fields:
        if any(target.column == column for target in describe(field).store.unique):
            return {field.name: [compiled_rules(field, "store").message("unique")]}
    return {column or "id": ["The value has already been taken."]}


async def validate_request(app: "Restify", fields: list[Field], payload: Mapping[str, Any], action: str,
                           record_id: str | None = None, files: Mapping[str, "uploads.Upload"] | None = None,
                           existing: Mapping[str, Any] | None = None, acting: Model | None = None,
                           proven: bool = False) -> tuple[dict[str, Any], list["uploads.PendingFile"]]:
    """Field values and image uploads checked together: one 422 reports every problem."""
    max_bytes = int(app.settings.get("files", "max_bytes"))
    upload_errors, pending = uploads.check_uploads(fields, dict(files or {}), max_bytes)
    for field in fields:
        if (field.is_file and action == "store" and field.name not in upload_errors
                and compiled_rules(field, action).required and not (files or {}).get(field.name)):
            upload_errors[field.name] = [compiled_rules(field, action).message("required")]
    try:
        clean = await validate(app, fields, payload, action, record_id, existing, acting, proven)
    except ValidationFailed as failed:
        raise ValidationFailed({**failed.errors, **upload_errors}) from None
    if upload_errors:
        raise ValidationFailed(upload_errors)
    return clean, pending
