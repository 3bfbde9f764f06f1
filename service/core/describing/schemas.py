"""JSON Schemas of single fields: as a request sends them and as a response shows them.

Shared by the OpenAPI document and the MCP tool schemas. Read off the field's description: the
same constraints the validator compiles (`service.core.declarations.rules.FieldRules`), so the document says what
the operations accept. The document gives the canonical form; the validator is more lenient where
HTML forms need it (numbers and booleans sent as text, an empty string meaning "no value" for typed
fields).
"""
import math
from typing import Any

from service.core.declarations import INT64, PATTERN_RULES, Constraints, Description, Field, describe, to_number

Schema = dict[str, Any]

_FORMATS = {"email": "email", "url": "uri"}

CURRENT_PASSWORD = "current_password"


def asks_current_password(fields: list[Field], action: str) -> bool:
    """Whether a body may carry `current_password`: a field changed there has that rule."""
    return action != "store" and any(describe(field).update.current_password for field in fields)


def current_password_schema() -> Schema:
    return {"type": "string", "writeOnly": True,
            "description": "Your current password: needed to change a field that says so (e.g. email, password)."}


def is_required(field: Field, action: str) -> bool:
    """Whether the body must carry the field: store and PUT apply `required`, PATCH never does."""
    return action != "patch" and describe(field).constraints(action).required


def is_nullable(field: Field, action: str) -> bool:
    return describe(field).constraints(action).nullable


def input_schema(field: Field, action: str, form: bool = False) -> Schema:
    """One writable attribute under the rules of `action` ("store", "update" or "patch").

    `form` describes the field as a multipart form part: no `null` (an empty part means
    "no value"), and image fields are binary parts."""
    description = describe(field)
    if field.is_file:
        return {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream",
                "description": f"{_label(description)}: a PNG, JPEG, GIF or WebP image (judged by its bytes)."}
    constraints = description.constraints(action)
    kind = description.json_type
    schema: Schema = {"type": kind}
    if kind != "boolean":
        _sizes(schema, constraints, kind)
        if constraints.allowed is not None:
            schema["enum"] = [_typed(value, kind) for value in constraints.allowed]
        if constraints.refused:
            schema["not"] = {"enum": [_typed(value, kind) for value in constraints.refused]}
    if constraints.format is not None:
        schema["format"] = _FORMATS[constraints.format]
    notes = _notes(field, constraints)
    if kind == "integer":
        schema.setdefault("minimum", -INT64 - 1)
        schema.setdefault("maximum", INT64)
    if description.type == "date":
        schema["format"] = "date"
        notes.append("an ISO 8601 date (a date-time is accepted too)")
    if kind == "string" and is_required(field, action):
        schema["minLength"] = max(1, schema.get("minLength", 1))  # blank counts as missing
    if field.kind == "password":
        schema["writeOnly"] = True
        notes.append("write-only, never returned")
    if constraints.nullable and not form:
        schema["type"] = [kind, "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    if field.has_default and action == "store":
        schema["default"] = field.default_value
    schema["description"] = _label(description) + (f": {'; '.join(notes)}." if notes else ".")
    return schema


def _notes(field: Field, constraints: Constraints) -> list[str]:
    """What the keywords do not say: patterns, `unique`, `exists`, confirmation, the current password."""
    notes = [PATTERN_RULES[pattern].note for pattern in constraints.patterns]
    notes += ["must be unique" for _ in constraints.unique]
    notes += [f"the {target.column} of an existing {target.collection} record" for target in constraints.exists]
    if constraints.confirmed:
        notes.append(f"send the same value again as {field.name}_confirmation")
    if constraints.current_password:
        notes.append(f"changing it needs {CURRENT_PASSWORD}")
    return notes


def confirmation_schema(field: Field, action: str, form: bool = False) -> Schema:
    """`<name>_confirmation` for a `confirmed` field: the same value again."""
    source = input_schema(field, action, form)
    schema: Schema = {"type": source["type"], "description": f"The {describe(field).label} again, to confirm it."}
    if field.kind == "password":
        schema["writeOnly"] = True
    return schema


def write_body(fields: list[Field], action: str, form: bool = False) -> Schema:
    """A store / PUT / PATCH body: writable fields (images only as form parts), `_confirmation`
    companions, `required` as the action applies it. Other keys are ignored, never stored."""
    properties: dict[str, Schema] = {}
    required: list[str] = []
    for field in fields:
        description = describe(field)
        if not (description.writable or (form and description.uploadable)):
            continue
        properties[field.name] = input_schema(field, action, form)
        needed = is_required(field, action) and (not field.is_file or action == "store")
        if needed:
            required.append(field.name)
        if description.constraints(action).confirmed:
            companion = f"{field.name}_confirmation"
            properties[companion] = confirmation_schema(field, action, form)
            if needed:
                required.append(companion)
    if asks_current_password(fields, action):
        properties[CURRENT_PASSWORD] = current_password_schema()
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def output_schema(field: Field) -> Schema:
    """The attribute as responses show it (`service.core.reading.serializer.present`).

    It is null when the field is nullable, optional without a default, or set by the
    server (read-only, `value(...)`, images): a record need not carry it."""
    description = describe(field)
    kind = "string" if field.is_file else description.json_type
    schema: Schema = {"type": kind}
    always = (is_required(field, "store") or (field.has_default and field.default_value is not None))
    if description.store.nullable or not description.writable or not always:
        schema["type"] = [kind, "null"]
    if description.server_set:
        schema["readOnly"] = True
    if field.is_file:
        schema["description"] = f"{_label(description)}: the stored file's URL (/storage/<dir>/<file>)."
    if field.see_rule is not None or field.hidden_actions:
        schema["description"] = (schema.get("description", "") + " " + BY_POLICY).strip()
    return schema


# How every description names a field shown by policy (`can_see`, `hide_on_index`, `hide_on_show`).
BY_POLICY = "Absent (GraphQL: null) where the caller may not see it."


def _sizes(schema: Schema, constraints: Constraints, kind: str) -> None:
    """The bounds every size rule allows: lengths of text, values of numbers."""
    low, high = constraints.low, constraints.high
    if kind == "string":
        if low > -math.inf:
            schema["minLength"] = max(0, int(-(-low // 1)))  # characters: a whole number, rounded up
        if high < math.inf:
            schema["maxLength"] = max(0, int(high // 1))
    else:
        if low > -math.inf:
            schema["minimum"] = low
        if high < math.inf:
            schema["maximum"] = high


def _typed(value: str, kind: str) -> Any:
    number = to_number(value) if kind in ("number", "integer") else None
    return number if number is not None else value


def _label(description: Description) -> str:
    """The field's label at the start of a sentence: `user_id` is "User id"."""
    return description.label[:1].upper() + description.label[1:]
