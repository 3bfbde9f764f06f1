"""What a repository offers beyond its five operations: actions (`Action`) and getters (`Getter`).

Both are named the same way (a `key` for URLs and tool names, kebab case of the class name; a `name`
for people, its words), say where they are offered (on the collection, on one record, or both) and
are listed by a repository method that takes the request's context (`actions(self, context)`,
`getters(self, context)`; an instance method or a classmethod). Listing checks what the method
returns, so a mistake names the repository instead of failing later.
"""
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from service.core.declarations import READ, Context, Model, Resource, Restify
from service.core.kernel import DeclarationError, NotFound, snake
from service.core.operations import crud as operations
from service.core.reading import query_text, visibility_of

E = TypeVar("E", bound="Extension")


def kebab(class_name: str) -> str:
    """`PublishPosts` -> `publish-posts`."""
    return snake(class_name).replace("_", "-")


def words(class_name: str) -> str:
    """`PublishPosts` -> `Publish Posts`."""
    return snake(class_name).replace("_", " ").title()


@dataclass
class RunContext(Context):
    """The context `handle` gets: the request's, plus where it runs (the operation's application view and
    the resource), which the helpers below read to run further operations as the same user."""
    app: Restify = field(kw_only=True, repr=False)
    resource: str = ""


def running(context: Context, app: Restify, resource: Resource, kind: type[RunContext] = RunContext,
            lent: frozenset[str] = frozenset(), **more: Any) -> Any:
    """A run context of `kind` for this request (a new value: the request's context is not changed);
    `lent`: abilities the run has beyond the token's."""
    return kind(user=context.user, door=context.door, params=context.params, action=context.action,
                base_url=context.base_url, extras=dict(context.extras), granted=context.granted | lent, app=app,
                resource=resource.name, **more)


def caller(context: Context, params: Mapping[str, Any] | None = None) -> Context:
    """A fresh context of the same user and door, for one more operation (operations set its `action`)."""
    return Context(user=context.user, door=context.door, base_url=context.base_url,
                   params={k: query_text(v) for k, v in (params or {}).items()}, extras={"url": ""},
                   granted=context.granted)


class Extension:
    """The naming and placement an action and a getter share, and their read helpers."""
    key: ClassVar[str] = ""      # default: kebab case of the class name
    name: ClassVar[str] = ""     # default: the words of the class name
    on_index: ClassVar[bool] = True   # offered on the collection (`<r>/actions`, `<r>/getters`)
    on_record: ClassVar[bool] = True  # offered on one record (`<r>/<id>/actions`, `<r>/<id>/getters`)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("key"):
            cls.key = kebab(cls.__name__)
        if not cls.__dict__.get("name"):
            cls.name = words(cls.__name__)

    def offered_on_record(self) -> bool:
        return self.on_record

    async def index(self, context: RunContext, repository: str, params: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
        """A page of another (or this) repository as the acting user may see it: what GET
        `<prefix>/<repository>?<params>` answers (e.g. `meta.total` with `{"post_id": id, "perPage": 1}`)."""
        return await operations.index(context.app, repository, caller(context, params))

    async def show(self, context: RunContext, repository: str, id: str) -> dict[str, Any]:
        """One record as the acting user may see it (GET `<prefix>/<repository>/<id>`): NotFound otherwise."""
        return await operations.show(context.app, repository, id, caller(context))

    async def visible(self, context: RunContext, repository: str, ids: Iterable[Any]) -> dict[str, Model]:
        """The records among `ids` the acting user may see (the repository's scope, then `show`), by id,
        in one query: one they may not see counts as missing (e.g. a post's `tag_ids`, counted)."""
        resource = context.app.resource(repository)
        found = await visibility_of(context.app, resource, context.user).find_many(ids)
        return {id: resource.model(document) for id, document in found.items()}


def declared(resource: Resource, method: str, kind: type[E], context: Context) -> list[E]:
    """What `resource`'s repository lists under `method` for this request, checked."""
    owner = type(resource.repository).__name__
    listed = getattr(resource.repository, method)(context) or []
    found: list[E] = []
    for item in listed:
        item = item() if isinstance(item, type) and issubclass(item, kind) else item  # a class will do
        if not isinstance(item, kind):
            raise DeclarationError(f"{owner}.{method}() returned {item!r}, which is not a {kind.__name__}")
        if any(other.key == item.key for other in found):
            raise DeclarationError(f"{owner}.{method}() lists the key {item.key!r} twice")
        found.append(item)
    return found


def offered(resource: Resource, method: str, kind: type[E], context: Context, on_record: bool) -> list[E]:
    """The ones offered where the request is: on one record, or on the collection."""
    return [item for item in declared(resource, method, kind, context)
            if (item.offered_on_record() if on_record else item.on_index)]


def chosen(resource: Resource, method: str, kind: type[E], context: Context, key: Any, on_record: bool) -> E:
    """The one named `key`, offered where the request is; NotFound otherwise."""
    found = next((item for item in offered(resource, method, kind, context, on_record) if item.key == key), None)
    if found is None:
        raise NotFound()
    return found


async def entered(app: Restify, name: str, context: Context, id: str | None) -> tuple[Resource, dict[str, Any] | None]:
    """The resource the request may enter (`allow_restify`) and, with an `id`, the record, which must be
    one the user may see (else NotFound, as on show). `app` is the operation's pinned view."""
    resource = operations.enter(app, name, context, READ)
    document = await operations.find(app, resource, id, context) if id is not None else None
    return resource, document
