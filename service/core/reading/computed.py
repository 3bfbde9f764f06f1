"""Computed fields: values worked out when records are answered, never stored.

`field("comment_count").computed(fn).integer()` calls `fn(record, context)` for each record answered;
`.computed_many(fn)` calls `fn(records, context)` once for a whole list of them — an index page, one
level of a relation's records, or the single record of show, a write's answer or a live event — so a
value that needs the database costs one query per list, not one per record. Either may be plain or
`async`. `context` is the request's, plus `app` and two reads that honour the user's read rules:

    field("comment_count").integer().computed_many(
        lambda posts, context: context.count_by("comments", "post_id", [p.id for p in posts]))

Every answer fills them here first (`fill`): index pages, show, the answers of writes, relations and
live events. Fields hidden from the request are not computed, nor those a fieldset leaves out.
"""
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.core.declarations import Context, Field, Resource
from service.core.reading.visibility import visibility_of

if TYPE_CHECKING:
    from service.core.declarations import Restify


@dataclass
class ComputeContext(Context):
    """What a computed field's function gets: the request's context and the application."""
    app: "Restify" = field(kw_only=True, repr=False)

    async def related(self, repository: str, key: str, values: Iterable[Any]) -> dict[Any, list[dict[str, Any]]]:
        """The records of `repository` whose `key` is one of `values`, that the user may see, grouped
        by that key: one query."""
        target = self._target(repository)
        wanted = list(dict.fromkeys(values))
        seen = visibility_of(self.app, target, self.user)
        found: dict[Any, list[dict[str, Any]]] = {value: [] for value in wanted}
        if not wanted or not seen.entered:
            return found
        for document in seen.shown(await self.app.collection(target).find_within(key, wanted, where=seen.within())):
            found.setdefault(document.get(key), []).append(document)
        return found

    async def count_by(self, repository: str, key: str, values: Iterable[Any]) -> dict[Any, int]:
        """How many records of `repository` within the user's read rule have each of `values` as `key`:
        one grouped count, no record read. It counts as index totals do: the policy's `scope()`, not
        `show()`, which would need every record read."""
        return await visibility_of(self.app, self._target(repository), self.user).count_by(key, values)

    def _target(self, repository: str) -> Resource:
        target = self.app.registry.get(repository)
        if target is None:
            raise LookupError(f"no repository {repository!r}")
        return target


def computed_fields(fields: Iterable[Field], keep: frozenset[str] | None = None) -> list[Field]:
    """The computed fields an answer shows (not hidden; those a fieldset keeps)."""
    return [f for f in fields if f.is_computed and not f.is_hidden and (keep is None or f.name in keep)]


async def fill(app: "Restify", resource: Resource, context: Context, documents: list[dict[str, Any]],
               fields: list[Field] | None = None, keep: frozenset[str] | None = None) -> None:
    """Sets each computed field's value on `documents` (in place), before they are serialized."""
    computed = computed_fields(fields if fields is not None else resource.fields(context), keep)
    if not computed or not documents:
        return
    records = [resource.model(document) for document in documents]
    run = ComputeContext(user=context.user, door=context.door, params=context.params, action=context.action,
                         base_url=context.base_url, extras=context.extras, budget=context.budget, app=app)
    for item in computed:
        if item.compute_many is not None:
            values = await _awaited(item.compute_many(records, run))
            if isinstance(values, Mapping):
                values = [values.get(document["id"]) for document in documents]
            else:
                values = list(values)
                if len(values) != len(documents):
                    raise ValueError(f"computed_many of {item.name!r} returned {len(values)} values for "
                                     f"{len(documents)} records")
        else:
            compute = item.compute
            assert compute is not None
            values = [await _awaited(compute(record, run)) for record in records]
        for document, value in zip(documents, values, strict=True):
            document[item.name] = value


async def _awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
