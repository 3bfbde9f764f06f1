"""Runs GraphQL requests against the current schema, with resolvers bound to the
operations layer, parsed-and-validated documents cached by query text, depth and
cost limits, and domain errors mapped to `extensions.code`."""
import importlib.util
import inspect
import logging
from collections import OrderedDict
from pathlib import Path
from typing import Any

from graphql import (
    GraphQLError, GraphQLObjectType, GraphQLSchema, build_schema, execute, parse,
    validate,
)

from service.core.app import Restify
from service.core.context import Context
from service.core.errors import RestifyError, from_storage
from service.graphql.config import GraphQLConfig
from service.graphql.fast import PlainFieldExecutor
from service.graphql.generator import build_schema_objects, exposed, lower_first
from service.graphql.limits import Measure
from service.graphql.resolvers import RepositoryResolvers, relation_resolver
from service.graphql.subscriptions import bind_subscriptions

log = logging.getLogger("restify.graphql")
CACHE_SIZE = 512


def _error_body(error: GraphQLError) -> dict[str, Any]:
    original = from_storage(error.original_error) if error.original_error is not None else None
    formatted = error.formatted
    if isinstance(original, RestifyError):
        formatted["message"] = original.message
        extensions = {"code": original.code}
        errors = getattr(original, "errors", None)
        if errors:
            extensions["errors"] = errors
        formatted["extensions"] = extensions
    elif original is not None and not isinstance(original, GraphQLError):
        log.error("resolver failed", exc_info=original)
        formatted["message"] = "Server error."
        formatted["extensions"] = {"code": "INTERNAL"}
    else:
        formatted.setdefault("extensions", {"code": "GRAPHQL_VALIDATION_FAILED"})
    return formatted


def load_resolver_classes(directory: Path) -> dict[str, type[RepositoryResolvers]]:
    """Generated (and possibly customized) resolver classes, by resource name."""
    found: dict[str, type[RepositoryResolvers]] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"_restify_resolvers_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, RepositoryResolvers) and value.resource:
                found[value.resource] = value
    return found


class GraphQLEndpoint:
    """One schema version: swapped whole when repositories or schema/ change."""

    def __init__(self, app: Restify, config: GraphQLConfig) -> None:
        self.app = app
        self.config = config
        self.schema = self._load_schema()
        self._bind()
        self._cache: OrderedDict[str, Any] = OrderedDict()

    def _load_schema(self) -> GraphQLSchema:
        path = self.config.schema_path
        if path.is_file():
            return build_schema(path.read_text())
        # Not generated yet: built in memory.
        return build_schema_objects(self.app.registry, self.config, self.app.settings.get("auth", "user_repository"))

    def _bind(self) -> None:
        classes = load_resolver_classes(self.config.output_dir / "resolvers")
        query, mutation = self.schema.query_type, self.schema.mutation_type
        self.list_fields: set[str] = set()
        for resource in exposed(self.app.registry, self.config):
            type_name = resource.model.__name__
            name = lower_first(type_name)
            resolvers = classes.get(resource.name, RepositoryResolvers)(self.app)
            resolvers.resource = resource.name
            _set(query, name, lambda _, info, r=resolvers, **kw: r.show(info, **kw))
            _set(query, f"{name}List", lambda _, info, r=resolvers, **kw: r.list(info, **kw))
            _set(mutation, f"create{type_name}", lambda _, info, r=resolvers, **kw: r.create(info, **kw))
            _set(mutation, f"update{type_name}", lambda _, info, r=resolvers, **kw: r.update(info, **kw))
            _set(mutation, f"delete{type_name}", lambda _, info, r=resolvers, **kw: r.delete(info, **kw))
            object_type = self.schema.get_type(type_name)
            if isinstance(object_type, GraphQLObjectType):
                for relation_name, relation in resource.relations.items():
                    single = relation.kind == "belongs_to"
                    _set(object_type, relation_name, relation_resolver(relation_name, single))
                    if not single:
                        self.list_fields.add(relation_name)
            self.list_fields.add(f"{name}List")
            if resource is self.app.user_resource:
                _set(query, "me", lambda _, info, r=resolvers: r.me(info))
        bind_subscriptions(self.app, self.schema, exposed(self.app.registry, self.config))

    def _document(self, query: str) -> Any:
        """(document, errors) for a query text, cached: validation costs far more than execution."""
        cached = self._cache.get(query)
        if cached is not None:
            self._cache.move_to_end(query)
            return cached
        try:
            document = parse(query)
        except GraphQLError as error:
            result: Any = (None, [error])
        else:
            result = (document, validate(self.schema, document))
        self._cache[query] = result
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return result

    def _limits(self, document: Any, variables: dict[str, Any] | None) -> list[GraphQLError]:
        measure = Measure(document, variables, int(self.config.get("schema", "default_first")), self.list_fields)
        max_depth, max_cost = int(self.config.get("schema", "max_depth")), int(self.config.get("schema", "max_cost"))
        if measure.depth() > max_depth:
            return [GraphQLError(f"The query is deeper than {max_depth} levels.",
                                 extensions={"code": "QUERY_TOO_DEEP"})]
        cost = measure.cost()
        if cost > max_cost:
            return [GraphQLError(f"The query costs {cost}, more than the limit of {max_cost}.",
                                 extensions={"code": "QUERY_TOO_COSTLY"})]
        return []

    async def run(self, query: Any, variables: Any, operation_name: Any, context: Context,
                  allow_mutations: bool = True) -> dict[str, Any]:
        if not isinstance(query, str) or not query.strip():
            return _failure("The request must contain a query string.", "BAD_REQUEST")
        if variables is not None and not isinstance(variables, dict):
            return _failure("The variables must be a JSON object.", "BAD_REQUEST")
        if operation_name is not None and not isinstance(operation_name, str):
            return _failure("The operationName must be a string.", "BAD_REQUEST")
        document, errors = self._document(query)
        if errors:
            return {"errors": [_error_body(e) for e in errors]}
        errors = self._limits(document, variables)
        if errors:
            return {"errors": [_error_body(e) for e in errors]}
        if not allow_mutations and _is_mutation(document, operation_name):
            return _failure("Mutations must be sent with POST.", "BAD_REQUEST")
        result = execute(self.schema, document, variable_values=variables, operation_name=operation_name,
                         context_value={"context": context}, executor_class=PlainFieldExecutor)
        if inspect.isawaitable(result):
            result = await result
        body: dict[str, Any] = {"data": result.data}
        if result.errors:
            body["errors"] = [_error_body(e) for e in result.errors]
        return body


def _set(owner: GraphQLObjectType | None, name: str, resolver: Any) -> None:
    if owner is not None and name in owner.fields:
        owner.fields[name].resolve = resolver


def _failure(message: str, code: str) -> dict[str, Any]:
    return {"errors": [{"message": message, "extensions": {"code": code}}]}


def _is_mutation(document: Any, operation_name: str | None) -> bool:
    operations = [d for d in document.definitions if getattr(d, "operation", None) is not None]
    chosen = [d for d in operations if operation_name is None or (d.name and d.name.value == operation_name)]
    return any(d.operation.value == "mutation" for d in chosen)
