"""Loads an application's repositories, models and policies, and checks every
declaration up front so a broken one fails at start-up with a clear message."""
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.core.declarations.context import Context
from service.core.declarations.exposure import DESCRIBING, fields_seen
from service.core.declarations.fields import DELETED_AT, Field, trash_field
from service.core.declarations.models import Model, RelationDecl
from service.core.declarations.policies import Gate, Policy, PolicyMap, check_scope
from service.core.declarations.repository import Repository
from service.core.declarations.rules import check_declaration
from service.core.declarations.webhooks import Webhook, webhooks_of
from service.core.kernel import RESERVED, DeclarationError, NotAnApplication


@dataclass
class ResourceRelation:
    name: str            # as clients name it in `related`
    kind: str            # belongs_to | has_many | belongs_to_many
    decl: RelationDecl
    target: "Resource"
    local_key: str       # read on the owner's documents
    foreign_key: str     # matched on the target's documents
    search_fields: tuple[str, ...] = ()  # the target's fields `search` also matches (BelongsTo.searchable)
    sort_fields: tuple[str, ...] = ()    # the target's fields `sort=<name>.<field>` orders by (BelongsTo.sortable)
    filter_fields: tuple[str, ...] = ()  # the target's fields `<name>.<field>[op]` filters by (BelongsTo.filterable)


@dataclass
class Resource:
    """A repository bound to its model, with its relations resolved."""
    name: str
    repository: Repository
    model: type[Model]
    relations: dict[str, ResourceRelation] = field(default_factory=dict)

    @property
    def collection(self) -> str:
        return self.model.collection

    @property
    def webhooks(self) -> list[Webhook]:
        return webhooks_of(self.repository, self.name)

    def fields(self, context: Context) -> list[Field]:
        """The repository's fields as `context` sees them (`exposure`: fields by policy), with
        `deleted_at` when it has soft deletes. A context keeps them (`seen_fields`): they are worked
        out once per user, action, door, lent abilities and parameters."""
        kept = context.seen_fields if context is not None else None
        if kept is None:
            return self._fields(context)
        key = (id(self.repository), id(context.user), context.action, context.door, context.granted,
               id(context.params), bool(context.extras.get(DESCRIBING)))
        found = kept.get(key)
        if found is None:
            # The objects the key names by id are held with the entry: no other can take their id meanwhile.
            found = kept[key] = ((self.repository, context.user, context.params), self._fields(context))
        return list(found[1])

    def _fields(self, context: Context) -> list[Field]:
        declared = list(self.repository.fields(context))
        if self.soft_deletes and all(f.name != DELETED_AT for f in declared):
            declared.append(trash_field())
        return fields_seen(declared, context, self.model)

    @property
    def soft_deletes(self) -> bool:
        return bool(type(self.repository).soft_deletes)

    @property
    def per_page(self) -> int | None:
        return type(self.repository).per_page


class Registry:
    def __init__(self, resources: dict[str, Resource], policies: PolicyMap) -> None:
        self.resources = resources
        self.policies = policies

    def get(self, name: str) -> Resource | None:
        return self.resources.get(name)

    def for_model(self, model_class: type[Model]) -> Resource | None:
        return next((r for r in self.resources.values() if r.model.__name__ == model_class.__name__), None)

    def entered_by(self, user: Model) -> list[str]:
        """The repositories `user` may enter (their policy's `allow_restify`), sorted: what a message may
        name without telling of one a policy hides. A model without a policy is entered by no one."""
        policies = ((name, self.policies.registered(resource.model)) for name, resource in self.resources.items())
        return sorted(name for name, policy in policies if policy is not None and Gate(policy, user).entered)


def build_registry(repositories: list[type[Repository]], policies: dict[Any, Any],
                   models_module: str = "repositories.models") -> Registry:
    resources: dict[str, Resource] = {}
    by_class: dict[str, Resource] = {}
    for repository_class in repositories:
        with _located_at(repository_class):
            model_class = repository_class.resolve_model(models_module)
            name = repository_class.uri_key or model_class.collection
            if name in resources:
                raise DeclarationError(f"{repository_class.__name__} and "
                                       f"{type(resources[name].repository).__name__} both serve {name!r}")
        resource = Resource(name, repository_class(), model_class)
        resources[name] = resource
        by_class[repository_class.__name__] = resource
    for resource in resources.values():
        with _located_at(type(resource.repository)):
            _check_fields(resource)
            webhooks_of(resource.repository, resource.name)  # a bad webhook fails at start
            _resolve_relations(resource, by_class)
    with _located_at(sys.modules.get(models_module.rpartition(".")[0] + ".policies")):
        _check_policies(policies)
    policy_map = PolicyMap(policies)
    policies_file = models_module.rpartition(".")[0].replace(".", "/") + "/policies.py"
    for resource in resources.values():  # said at start, not only when a request first meets the model
        if policy_map.registered(resource.model) is None:
            policy_map.warn_unguarded(resource.model, policies_file)
    return Registry(resources, policy_map)


@contextmanager
def _located_at(declared: Any) -> Iterator[None]:
    """Gives a DeclarationError that names no place the file and line of `declared` (a repository
    class or the policies module), so the author is sent to the declaration at fault. One raised
    from the author's own exception keeps pointing at the line that raised it."""
    try:
        yield
    except DeclarationError as error:
        if getattr(error, "location", None) is None and error.__cause__ is None and declared is not None:
            error.location = _source_line(declared)
        raise


def _source_line(declared: Any) -> tuple[str, int] | None:
    try:
        path = inspect.getsourcefile(declared)
        if path is None:
            return None
        if inspect.ismodule(declared):  # the policies map, or the module's first line
            lines = Path(path).read_text().splitlines()
            return path, next((n for n, text in enumerate(lines, 1) if text.startswith("POLICIES")), 1)
        return path, inspect.getsourcelines(declared)[1]
    except (OSError, TypeError):
        return None


def _check_fields(resource: Resource) -> None:
    owner = type(resource.repository).__name__
    try:
        declared = resource.fields(Context(action="declaration"))
    except DeclarationError as error:  # a field refused while it was being built (field.check_hidden)
        located = DeclarationError(f"{owner}: {error}")
        located.location = getattr(error, "location", None)
        raise located from None
    except Exception as error:
        raise DeclarationError(f"{owner}.fields() raised {type(error).__name__}: {error}") from error
    seen: set[str] = set()
    for item in declared:
        if not isinstance(item, Field):
            raise DeclarationError(f"{owner}.fields() returned {item!r}, which is not a field(...)")
        if item.name in seen or item.name in ("id", "_id") or item.name.startswith("$") or "." in item.name:
            raise DeclarationError(f"{owner}: field name {item.name!r} is repeated or reserved")
        if item.name in RESERVED:
            raise DeclarationError(f"{owner}: field name {item.name!r} is a reserved query parameter "
                                   f"({', '.join(sorted(RESERVED))})")
        seen.add(item.name)
        try:
            _check_text(item, declared)
            item.check_hidden()
            check_declaration(item)
        except DeclarationError as error:
            located = DeclarationError(f"{owner}: {error}")
            located.location = item.declared_at
            raise located from None


def _check_text(item: Field, declared: list[Any]) -> None:
    """A repository's own searchable fields are all text or none: MongoDB's `$text` sits in a `$or` only
    when every other branch is read from an index, and a substring test on a field is not."""
    if item.is_searchable and not item.is_text and any(f.is_text for f in declared if isinstance(f, Field)):
        texts = ", ".join(f.name for f in declared if isinstance(f, Field) and f.is_text)
        raise DeclarationError(f"field {item.name!r} is searchable without text=True beside text fields ({texts}): "
                               "a repository's searchable fields are all text=True or none")


def _resolve_relations(resource: Resource, by_class: dict[str, Resource]) -> None:
    owner = type(resource.repository).__name__
    for name, related in type(resource.repository).related().items():
        target_name = related.repository if isinstance(related.repository, str) else related.repository.__name__
        target = by_class.get(target_name)
        if target is None:
            raise DeclarationError(f"{owner}.related()[{name!r}] refers to repository {target_name!r}, "
                                   "which is not loaded")
        decl = resource.model.relations.get(related.attribute)
        if decl is None:
            raise DeclarationError(f"{owner}.related()[{name!r}]: model {resource.model.__name__} has no "
                                   f"relation {related.attribute!r}")
        if decl.kind != related.kind:
            raise DeclarationError(f"{owner}.related()[{name!r}] is a {related.kind} but "
                                   f"{resource.model.__name__}.{related.attribute} is a {decl.kind}")
        decl.target_model()  # raises when the target model does not exist
        resource.relations[name] = ResourceRelation(
            name, decl.kind, decl, target, decl.local_key(resource.model), decl.foreign_key(resource.model),
            tuple(dict.fromkeys(related.search_fields)), tuple(dict.fromkeys(related.sort_fields)),
            tuple(dict.fromkeys(related.filter_fields)),
        )
    for name, relation in resource.relations.items():
        _check_through(owner, name, relation)


def _check_through(owner: str, name: str, relation: ResourceRelation) -> None:
    """The fields a relation searches, sorts or filters by are the target's own visible fields, shown to
    everyone (not by policy: a search through a relation would tell their values)."""
    if not (relation.search_fields or relation.sort_fields or relation.filter_fields):
        return
    shown = {f.name for f in relation.target.fields(Context(action="declaration"))
             if not (f.is_hidden or f.by_policy)}
    for what, names in (("searchable", relation.search_fields), ("sortable", relation.sort_fields),
                        ("filterable", relation.filter_fields)):
        for field_name in names:
            if field_name not in shown | {"id"}:
                raise DeclarationError(f"{owner}.related()[{name!r}].{what}({field_name!r}): "
                                       f"{type(relation.target.repository).__name__} has no visible field "
                                       f"{field_name!r}")


def _check_policies(policies: dict[Any, Any]) -> None:
    for model_class, policy in policies.items():
        if not (isinstance(model_class, type) and issubclass(model_class, Model)):
            raise DeclarationError(f"POLICIES key {model_class!r} is not a Model class")
        policy_class = policy if isinstance(policy, type) else type(policy)
        if not issubclass(policy_class, Policy):
            raise DeclarationError(f"POLICIES[{model_class.__name__}] = {policy!r} is not a Policy")
        check_scope(policy() if isinstance(policy, type) else policy)


def load_app(app_dir: str | Path, package: str = "repositories") -> Registry:
    """Imports `<app_dir>/<package>` afresh (so edits are seen) and builds its registry."""
    app_dir = str(Path(app_dir).resolve())
    if app_dir in sys.path:
        sys.path.remove(app_dir)
    sys.path.insert(0, app_dir)  # first, so this app's package wins over one loaded before
    for loaded in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[loaded]
    importlib.invalidate_caches()
    if not (Path(app_dir) / package / "__init__.py").is_file():
        raise NotAnApplication(f"{app_dir} has no {package}/ package, so it is not a Restify application: "
                               "run restify in an application directory, pass --app-dir, or start one with "
                               "`restify new DIR`")
    root = importlib.import_module(package)
    if root.__file__ is None:  # a namespace package: directories without __init__.py, none of them app_dir's
        raise DeclarationError(f"package {package!r} was imported as a namespace package, not from {app_dir}")
    root_dir = Path(root.__file__).parent.resolve()
    if not str(root_dir).startswith(app_dir):
        raise DeclarationError(f"package {package!r} was imported from {root_dir}, not from {app_dir}")
    repositories: list[type[Repository]] = []
    for info in sorted(pkgutil.iter_modules([str(root_dir)]), key=lambda i: i.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Repository) and value is not Repository
                    and value.__module__ == module.__name__):
                repositories.append(value)
    policies_module = sys.modules.get(f"{package}.policies")
    policies = getattr(policies_module, "POLICIES", {}) if policies_module else {}
    return build_registry(repositories, policies, models_module=f"{package}.models")
