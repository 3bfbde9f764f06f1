"""JSON Schemas of single fields: as a request sends them and as a response shows them.

Shared by the OpenAPI document and the MCP tool schemas. Read off the same
declarations and rule strings the validator compiles
(`service.core.rules.FieldRules`), in the same order, so the document says what
the operations accept. The document gives the canonical form; the validator is
more lenient where HTML forms need it (numbers and booleans sent as text, an
empty string meaning "no value" for typed fields).
"""
from typing import Any

from service.core.description import INT64, Rule, describe, to_number
from service.core.fields import Field
from service.core.rules import MAX_TEXT
from service.core.validation import writable

Schema = dict[str, Any]

_FORMATS = {"email": "email", "url": "uri"}
_NOTES = {
    "alpha": "letters only",
    "alpha_num": "letters and digits only",
    "alpha_dash": "letters, digits, dashes and underscores only",
    "unique": "must be unique",
}


def mode(action: str) -> str:
    """The rule set an action validates with: "store", or "update" for PUT, PATCH and the profile."""
    return "store" if action == "store" else "update"


def parsed_rules(field: Field, action: str) -> list[Rule]:
    return [Rule.parse(text) for text in field.rules_for(mode(action))]


CURRENT_PASSWORD = "current_password"


def asks_current_password(fields: list[Field], action: str) -> bool:
    """Whether a body may carry `current_password`: a field changed there has that rule."""
    return mode(action) == "update" and any(rule.name == "current_password" for field in fields
                                            for rule in parsed_rules(field, action))


def current_password_schema() -> Schema:
    return {"type": "string", "writeOnly": True,
            "description": "Your current password: needed to change a field that says so (e.g. email, password)."}


def is_required(field: Field, action: str) -> bool:
    """Whether the body must carry the field: store and PUT apply `required`, PATCH never does."""
    return action != "patch" and any(rule.name == "required" for rule in parsed_rules(field, action))


def is_nullable(field: Field, action: str) -> bool:
    return field.is_nullable or any(rule.name == "nullable" for rule in parsed_rules(field, action))


def input_schema(field: Field, action: str, form: bool = False) -> Schema:
    """One writable attribute under the rules of `action` ("store", "update" or "patch").

    `form` describes the field as a multipart form part: no `null` (an empty part means
    "no value"), and image fields are binary parts."""
    if field.is_file:
        return {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream",
                "description": f"{_label(field)}: a PNG, JPEG, GIF or WebP image (judged by its bytes)."}
    rules = parsed_rules(field, action)
    description = describe(field)
    kind = description.json_type
    schema: Schema = {"type": kind}
    notes: list[str] = []
    has_max = False
    for rule in rules:
        if rule.name in ("max", "min", "between") and kind != "boolean":
            has_max = has_max or rule.name in ("max", "between")
            _size(schema, rule, kind)
        elif rule.name in ("in", "not_in") and kind != "boolean":
            values = [_typed(value, kind) for value in rule.params]
            if rule.name == "in":
                schema["enum"] = values
            else:
                schema["not"] = {"enum": values}
        elif rule.name in _FORMATS:
            schema["format"] = _FORMATS[rule.name]
        elif rule.name in _NOTES:
            notes.append(_NOTES[rule.name])
        elif rule.name == "exists":
            column = rule.params[1] if len(rule.params) > 1 and rule.params[1] else "id"
            notes.append(f"the {column} of an existing {rule.params[0]} record")
        elif rule.name == "confirmed":
            notes.append(f"send the same value again as {field.name}_confirmation")
        elif rule.name == "current_password":
            notes.append(f"changing it needs {CURRENT_PASSWORD}")
    if description.is_text and not has_max:
        schema["maxLength"] = MAX_TEXT  # the validator's implicit ceiling for text
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
    if is_nullable(field, action) and not form:
        schema["type"] = [kind, "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    if field.has_default and action == "store":
        schema["default"] = field.default_value
    schema["description"] = _label(field) + (f": {'; '.join(notes)}." if notes else ".")
    return schema


def confirmation_schema(field: Field, action: str, form: bool = False) -> Schema:
    """`<name>_confirmation` for a `confirmed` field: the same value again."""
    source = input_schema(field, action, form)
    schema: Schema = {"type": source["type"], "description": f"The {_label(field).lower()} again, to confirm it."}
    if field.kind == "password":
        schema["writeOnly"] = True
    return schema


def write_body(fields: list[Field], action: str, form: bool = False) -> Schema:
    """A store / PUT / PATCH body: writable fields (images only as form parts), `_confirmation`
    companions, `required` as the action applies it. Other keys are ignored, never stored."""
    properties: dict[str, Schema] = {}
    required: list[str] = []
    sent = writable(fields)
    for field in fields:
        if field not in sent and not (form and field.is_file and not field.is_readonly):
            continue
        properties[field.name] = input_schema(field, action, form)
        needed = is_required(field, action) and (not field.is_file or action == "store")
        if needed:
            required.append(field.name)
        if any(rule.name == "confirmed" for rule in parsed_rules(field, action)):
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
    """The attribute as responses show it (`service.core.serializer.present`).

    It is null when the field is nullable, optional without a default, or set by the
    server (read-only, `value(...)`, images): a record need not carry it."""
    kind = "string" if field.is_file else describe(field).json_type
    schema: Schema = {"type": kind}
    always = (is_required(field, "store") or (field.has_default and field.default_value is not None))
    server_set = field.is_readonly or field.is_file or field.value_callback is not None
    if is_nullable(field, "store") or server_set or not always:
        schema["type"] = [kind, "null"]
    if field.is_readonly or field.value_callback is not None:
        schema["readOnly"] = True
    if field.is_file:
        schema["description"] = f"{_label(field)}: the stored file's URL (/storage/<dir>/<file>)."
    return schema


def _size(schema: Schema, rule: Rule, kind: str) -> None:
    bounds = [to_number(p) for p in rule.params]
    low = bounds[0] if rule.name in ("min", "between") else None
    high = bounds[-1] if rule.name in ("max", "between") else None
    if kind == "string":
        if low is not None:
            schema["minLength"] = max(0, int(-(-low // 1)))  # characters: a whole number, rounded up
        if high is not None:
            schema["maxLength"] = max(0, int(high // 1))
    else:
        if low is not None:
            schema["minimum"] = low
        if high is not None:
            schema["maximum"] = high


def _typed(value: str, kind: str) -> Any:
    number = to_number(value) if kind in ("number", "integer") else None
    return number if number is not None else value


def _label(field: Field) -> str:
    return field.name.replace("_", " ").capitalize()
