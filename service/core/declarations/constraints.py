"""What a field's rule strings constrain, read once per action into plain values.

The one reader of rule strings outside the declaration check (`service.core.declarations.rules.check_declaration`):
the validator compiles its checks from these constraints, and the JSON Schemas of OpenAPI and MCP and
the GraphQL generator describe them (`service.core.declarations.description` carries them per field). A field has
one set for storing and one for updating (`rules` plus `storing_rules`, or plus `updating_rules`).
"""
import math
import re
from dataclasses import dataclass

MAX_TEXT = 65_535  # the implicit ceiling of free text without its own `max`
SIZES = ("min", "max", "between")
FORMATS = ("email", "url")
# Rules that shape the flow of validation, not a check of the value (`sometimes` is accepted and changes nothing).
FLOW = ("required", "nullable", "sometimes", "confirmed", "unique", "exists", "current_password")
TYPES = ("string", "numeric", "integer", "boolean", "date")

_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$", re.ASCII)


@dataclass(frozen=True)
class Pattern:
    """A rule a text must match, one entry each: the declaration check, the validator (its regex and
    422 message) and the JSON Schemas (its note) read it here."""
    name: str
    regex: re.Pattern[str]
    message: str  # {attribute}: the field's label
    note: str     # what a schema's description says of it


PATTERN_RULES = {pattern.name: pattern for pattern in (
    Pattern("alpha", re.compile(r"^[^\W\d_]+$"), "The {attribute} may only contain letters.", "letters only"),
    Pattern("alpha_num", re.compile(r"^[^\W_]+$"), "The {attribute} may only contain letters and numbers.",
            "letters and digits only"),
    Pattern("alpha_dash", re.compile(r"^[\w-]+$"),
            "The {attribute} may only contain letters, numbers, dashes and underscores.",
            "letters, digits, dashes and underscores only"),
)}
PATTERNS = tuple(PATTERN_RULES)


@dataclass(frozen=True)
class Rule:
    """One rule string, `name:param,param`."""
    name: str
    params: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> "Rule":
        name, _, rest = text.partition(":")
        params = tuple(p.strip() for p in rest.split(",")) if rest else ()
        return cls(name.strip(), params)


def _number(text: str) -> int | float:
    """A declared bound: an integer when written as one (so documents say 5, not 5.0)."""
    return int(text) if _INTEGER.match(text) else float(text)


@dataclass(frozen=True)
class Check:
    """One check of a value after its type, in declared order: a size (`min`, `max`, `between`: the
    length of text, the value of a number), a list (`in`, `not_in`), a format (`email`, `url`), a
    pattern (`alpha`, `alpha_num`, `alpha_dash`) or `image`."""
    rule: str
    low: int | float = -math.inf
    high: int | float = math.inf
    values: tuple[str, ...] = ()

    @property
    def is_size(self) -> bool:
        return self.rule in SIZES


@dataclass(frozen=True)
class Target:
    """The records a `unique` or `exists` rule looks in: `unique:users,email`, `exists:posts` (its id)."""
    rule: str        # "unique" or "exists"
    collection: str
    column: str      # `unique` looks in the field's own column by default, `exists` at the ids


@dataclass(frozen=True)
class Constraints:
    """One action's constraints on a field's value."""
    required: bool
    nullable: bool
    confirmed: bool          # the body carries `<name>_confirmation` with the same value
    current_password: bool   # changing the value needs the acting user's password
    checks: tuple[Check, ...]
    targets: tuple[Target, ...]  # `unique` and `exists`, in declared order

    @property
    def low(self) -> int | float:
        """The least size every size check allows (-inf: unbounded)."""
        return max((check.low for check in self.checks if check.is_size), default=-math.inf)

    @property
    def high(self) -> int | float:
        """The greatest size every size check allows, the implicit text ceiling included (inf: unbounded)."""
        return min((check.high for check in self.checks if check.is_size), default=math.inf)

    @property
    def allowed(self) -> tuple[str, ...] | None:
        """The values every `in` rule lists (in the first one's order); None without an `in` rule."""
        lists = [check.values for check in self.checks if check.rule == "in"]
        return tuple(v for v in lists[0] if all(v in other for other in lists[1:])) if lists else None

    @property
    def refused(self) -> tuple[str, ...]:
        """The values some `not_in` rule lists."""
        return tuple(dict.fromkeys(v for check in self.checks if check.rule == "not_in" for v in check.values))

    @property
    def format(self) -> str | None:
        """`email` or `url`, the format a rule gives the value (the last one declared)."""
        return next((check.rule for check in reversed(self.checks) if check.rule in FORMATS), None)

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(check.rule for check in self.checks if check.rule in PATTERNS)

    @property
    def unique(self) -> tuple[Target, ...]:
        return tuple(target for target in self.targets if target.rule == "unique")

    @property
    def exists(self) -> tuple[Target, ...]:
        return tuple(target for target in self.targets if target.rule == "exists")


def read(name: str, texts: tuple[str, ...], nullable: bool, is_text: bool) -> Constraints:
    """The constraints of one action's rule strings. `nullable`: the field was declared `nullable()`;
    `is_text`: free text, capped at MAX_TEXT unless a `max` or `between` rule says otherwise."""
    rules = [Rule.parse(text) for text in texts]
    names = {rule.name for rule in rules}
    checks = [check for check in (_check(rule) for rule in rules) if check is not None]
    if is_text and not any(check.rule in ("max", "between") for check in checks):
        checks.append(Check("max", high=MAX_TEXT))
    targets = tuple(_target(name, rule) for rule in rules if rule.name in ("unique", "exists"))
    return Constraints(required="required" in names, nullable=nullable or "nullable" in names,
                       confirmed="confirmed" in names, current_password="current_password" in names,
                       checks=tuple(checks), targets=targets)


def _check(rule: Rule) -> Check | None:
    if rule.name in SIZES:
        bounds = [_number(p) for p in rule.params]
        return Check(rule.name, low=bounds[0] if rule.name != "max" else -math.inf,
                     high=bounds[-1] if rule.name != "min" else math.inf)
    if rule.name in ("in", "not_in"):
        return Check(rule.name, values=rule.params)
    if rule.name in (*FORMATS, *PATTERNS, "image"):
        return Check(rule.name)
    return None  # a type, a flow rule, or a name the declaration check refuses


def _target(name: str, rule: Rule) -> Target:
    default = name if rule.name == "unique" else "id"
    column = rule.params[1] if len(rule.params) > 1 and rule.params[1] else default
    return Target(rule.name, rule.params[0], column)
