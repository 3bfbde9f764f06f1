"""Runs GraphQL requests against the current schema, with resolvers bound to the
operations layer, and domain errors mapped to `extensions.code`.

Before anything runs, a query text is bounded by its size, cheapest check first: parsing stops
at `graphql.max_tokens`, then the selections (through fragments), depth and cost are measured in
time linear in the document, and only a document within all of them is validated (a large one in a
worker process: see `validation`). What a text gives (the document, its errors or its refusal, its
measure) is cached by the text."""
import asyncio
import importlib.util
import inspect
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode, ExecutionResult, GraphQLError, GraphQLObjectType, GraphQLSchema, OperationType, TokenKind,
    execute, get_operation_ast, parse, print_schema,
)

from service.core.declarations.app import Restify
from service.core.declarations.budget import Budget
from service.core.declarations.context import Context
from service.core.kernel.answers import answer
from service.core.kernel.errors import BadRequest, ResponseTooLarge
from service.graphql import accounts, actions, aggregating, attaching, bulk, tokens, trash
from service.graphql.config import GraphQLConfig
from service.graphql.direct import answers_directly, plan_direct, run_direct
from service.graphql.fast import PlainFieldExecutor
from service.graphql.generator import build_schema_objects, exposed, lower_first
from service.graphql.limits import Measure, Size
from service.graphql.resolvers import PLANS, RepositoryResolvers, relation_resolver
from service.graphql.sdl import schema_from_sdl
from service.graphql.subscriptions import bind_subscriptions
from service.graphql.validation import refusal_body, validation_errors

log = logging.getLogger("restify.graphql")
CACHE_SIZE = 512
UNPLANNED = object()


@dataclass
class Prepared:
    """What one query text gives, computed once and cached with it."""
    document: DocumentNode | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)  # syntax, depth, cost, validation: the answer
    refusal: str | None = None  # over the token or selection limit: a 400 with this message
    measure: Measure | None = None
    # What each repository field of the document selects (resolvers.RepositoryResolvers.context): planned
    # by its first request, for every later one, and gone with the document.
    plans: dict[Any, Any] = field(default_factory=dict)
    # A plain list or record answered without graphql-core's executor (`direct`): planned by its first request.
    direct: Any = UNPLANNED


def error_body(error: GraphQLError) -> dict[str, Any]:
    original = error.original_error
    formatted = error.formatted
    if original is None or isinstance(original, GraphQLError):
        return refusal_body(formatted)
    return {**formatted, **error_entry(original, "resolver failed")}


def error_entry(error: BaseException, failed: str) -> dict[str, Any]:
    """The message and extensions of core's answer for `error`; a fault is logged as `failed`."""
    mapped = answer(error)
    if mapped.fault:
        log.error(failed, exc_info=error)
    return {"message": mapped.body["message"], "extensions": mapped.extensions()}


def load_resolver_classes(directory: Path) -> dict[str, type[RepositoryResolvers]]:
    """Generated (and possibly customized) resolver classes, by resource name."""
    found: dict[str, type[RepositoryResolvers]] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"_restify_resolvers_{path.stem}", path)
        if spec is None or spec.loader is None:  # not a module Python can load
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, RepositoryResolvers) and value.resource:
                found[value.resource] = value
    return found


def _default_first(field: Any, fallback: int) -> int:
    """The default of a list field's `first` argument in the schema (a repository's page size)."""
    argument = field.args.get("first") if field is not None else None
    value = argument.default_value if argument is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


class GraphQLEndpoint:
    """One schema version: swapped whole when repositories or schema/ change."""

    def __init__(self, app: Restify, config: GraphQLConfig) -> None:
        self.app = app
        self.config = config
        self.schema = self._load_schema()
        self._bind()
        self._cache: OrderedDict[str, asyncio.Future[Prepared]] = OrderedDict()
        self.max_tokens = int(app.settings.get("graphql", "max_tokens"))
        self.max_selections = int(app.settings.get("graphql", "max_selections"))
        self.max_depth = int(config.get("schema", "max_depth"))
        self.max_cost = int(config.get("schema", "max_cost"))
        self._sdl: str | None = None

    @property
    def sdl(self) -> str:
        """The schema's text, which the validation worker builds it from."""
        if self._sdl is None:
            self._sdl = print_schema(self.schema)
        return self._sdl

    @property
    def _first(self) -> int:
        return int(self.config.get("schema", "default_first"))

    def _load_schema(self) -> GraphQLSchema:
        path = self.config.schema_path
        if path.is_file():
            return schema_from_sdl(path.read_text())
        # Not generated yet: built in memory.
        return build_schema_objects(self.app.registry, self.config, self.app.settings.get("auth", "user_repository"))

    def _bind(self) -> None:
        classes = load_resolver_classes(self.config.output_dir / "resolvers")
        query, mutation = self.schema.query_type, self.schema.mutation_type
        self.list_fields: dict[str, int] = {}  # list field -> its default `first`, which the cost counts
        # `<type>List` and `<type>` fields that may skip the executor
        self.direct_lists: dict[str, RepositoryResolvers] = {}
        self.direct_shows: dict[str, RepositoryResolvers] = {}
        exposed_names = {r.name for r in exposed(self.app.registry, self.config)}
        for resource in exposed(self.app.registry, self.config):
            type_name = resource.model.__name__
            name = lower_first(type_name)
            resolvers = classes.get(resource.name, RepositoryResolvers)(self.app)
            resolvers.resource = resource.name
            _set(query, name, lambda _, info, r=resolvers, **kw: r.show(info, **kw))
            _set(query, f"{name}List", lambda _, info, r=resolvers, **kw: r.list(info, **kw))
            if answers_directly(resolvers):
                self.direct_lists[f"{name}List"] = self.direct_shows[name] = resolvers
            _set(query, f"{name}Page", lambda _, info, r=resolvers, **kw: r.paginate(info, **kw))
            _set(mutation, f"create{type_name}", lambda _, info, r=resolvers, **kw: r.create(info, **kw))
            _set(mutation, f"update{type_name}", lambda _, info, r=resolvers, **kw: r.update(info, **kw))
            _set(mutation, f"delete{type_name}", lambda _, info, r=resolvers, **kw: r.delete(info, **kw))
            attaching.bind(mutation, resource, resolvers, exposed_names)
            bulk.bind(mutation, type_name, resolvers, _set)
            trash.bind(mutation, type_name, resolvers, _set)
            aggregating.bind(query, name, resolvers, _set)
            object_type = self.schema.get_type(type_name)
            if isinstance(object_type, GraphQLObjectType):
                for relation_name, relation in resource.relations.items():
                    single = relation.kind == "belongs_to"
                    _set(object_type, relation_name, relation_resolver(relation_name, single))
                    if not single:
                        first = _default_first(object_type.fields.get(relation_name), self._first)
                        self.list_fields[relation_name] = max(first, self.list_fields.get(relation_name, 0))
            for listing in (f"{name}List", f"{name}Page"):  # `first` records each
                listed = query.fields.get(listing) if query is not None else None
                self.list_fields[listing] = _default_first(listed, self._first)
            if resource is self.app.user_resource:
                _set(query, "me", lambda _, info, r=resolvers: r.me(info))
        bind_subscriptions(self.app, self.schema, exposed(self.app.registry, self.config))
        actions.bind(self.app, self.schema, exposed(self.app.registry, self.config))
        tokens.bind(self.app, self.schema)
        accounts.bind(self.app, self.schema)

    async def prepared(self, query: str) -> Prepared:
        """The cached preparation of a query text; requests for a text being prepared wait for it."""
        future = self._cache.get(query)
        if future is None:
            future = self._cache[query] = asyncio.ensure_future(self._prepare(query))
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(query)
        try:
            return await future
        except Exception:
            self._cache.pop(query, None)  # not a property of the text: the next request tries again
            raise

    async def _prepare(self, query: str) -> Prepared:
        try:
            document = parse(query, max_tokens=self.max_tokens)
        except GraphQLError as error:
            if error.message == f"Syntax Error: Document contains more than {self.max_tokens} tokens. Parsing aborted.":
                return Prepared(refusal=f"The query has more than {self.max_tokens} tokens.")
            return Prepared(errors=[error_body(error)])
        if _has_long_number(document):
            return Prepared(refusal=f"A number in the query is longer than {MAX_NUMBER_CHARACTERS} characters.")
        measure = Measure(document, self._first, self.list_fields)
        size = measure.size()  # without variables: only the cost can change with them
        if size.selections > self.max_selections:
            return Prepared(refusal=f"The query selects more than {self.max_selections} fields.")
        errors = self._size_errors(size, with_cost=not measure.uses_variables)
        if not errors:
            errors = await validation_errors(self.schema, self.sdl, query, document)
        return Prepared(document, errors, measure=measure)

    def size_errors(self, prepared: Prepared, variables: Any) -> list[dict[str, Any]]:
        """Depth and cost again where `first` comes from a variable (the rest was checked once, cached)."""
        if prepared.measure is None or not prepared.measure.uses_variables:
            return []
        return self._size_errors(prepared.measure.size(variables if isinstance(variables, dict) else None))

    def _size_errors(self, size: Size, with_cost: bool = True) -> list[dict[str, Any]]:
        if size.depth > self.max_depth:
            return [_failure_error(f"The query is deeper than {self.max_depth} levels.", "QUERY_TOO_DEEP")]
        if with_cost and size.cost > self.max_cost:
            return [_failure_error(f"The query costs {size.cost}, more than the limit of {self.max_cost}.",
                                   "QUERY_TOO_COSTLY")]
        return []

    async def run(self, query: Any, variables: Any, operation_name: Any, context: Context,
                  allow_mutations: bool = True, measured: bool = False) -> dict[str, Any]:
        """The answer's JSON. `measured`: the caller measures the encoded answer against the budget
        (`Budget.check_encoded`, then `too_large`), so a list answered directly, after which nothing is
        built, is not encoded a first time to be measured."""
        if not isinstance(query, str) or not query.strip():
            return _failure("The request must contain a query string.", "BAD_REQUEST")
        if variables is not None and not isinstance(variables, dict):
            return _failure("The variables must be a JSON object.", "BAD_REQUEST")
        if operation_name is not None and not isinstance(operation_name, str):
            return _failure("The operationName must be a string.", "BAD_REQUEST")
        prepared = await self.prepared(query)
        if prepared.refusal:
            raise BadRequest(prepared.refusal)
        errors = prepared.errors or self.size_errors(prepared, variables)
        if errors:
            return {"errors": errors}
        document = prepared.document
        assert document is not None  # a text refused or with errors is answered above; any other was parsed
        operation = get_operation_ast(document, operation_name)
        if operation is not None and operation.operation == OperationType.SUBSCRIPTION:
            raise BadRequest("Subscriptions are served over WebSocket.")  # graphql-transport-ws on this path
        if not allow_mutations and _is_mutation(document, operation_name):
            return _failure("Mutations must be sent with POST.", "BAD_REQUEST")
        if prepared.direct is UNPLANNED:
            prepared.direct = plan_direct(self.schema, document, self.direct_lists, self.direct_shows)
        # One budget for the whole answer: core charges each record it builds, relation fields each
        # further place they write one (service.core.declarations.budget).
        context.budget = Budget(self.app.settings.max_response_bytes, copies=False,
                                door_measures=measured and prepared.direct is not None)
        direct = await run_direct(self.schema, prepared.direct, variables, operation_name, context) \
            if prepared.direct is not None else None
        if direct is not None:
            result = direct
        else:
            if prepared.direct is not None:  # a direct try that gave up may have spent some of the budget
                context.budget = Budget(self.app.settings.max_response_bytes, copies=False)
            executed = execute(self.schema, document, variable_values=variables, operation_name=operation_name,
                               context_value={"context": context, PLANS: prepared.plans},
                               executor_class=PlainFieldExecutor)
            result = await executed if inspect.isawaitable(executed) else executed
        if context.budget.spent:  # one error for the answer, not one per field that went on to charge it
            assert context.budget.limit is not None  # spent only where there is a limit
            return too_large(context.budget.limit)
        return result_body(result)


def too_large(limit: int) -> dict[str, Any]:
    """The answer over the budget of `limit` bytes."""
    return {"data": None, "errors": [error_entry(ResponseTooLarge(limit), "")]}


def result_body(result: ExecutionResult) -> dict[str, Any]:
    """An execution result as the answer's JSON: data, and errors mapped by core."""
    body: dict[str, Any] = {"data": result.data}
    if result.errors:
        body["errors"] = [error_body(e) for e in result.errors]
    return body


def _set(owner: GraphQLObjectType | None, name: str, resolver: Any) -> None:
    if owner is not None and name in owner.fields:
        owner.fields[name].resolve = resolver


def _failure_error(message: str, code: str) -> dict[str, Any]:
    return {"message": message, "extensions": {"code": code}}


def _failure(message: str, code: str) -> dict[str, Any]:
    return {"errors": [_failure_error(message, code)]}


def _is_mutation(document: Any, operation_name: str | None) -> bool:
    operations = [d for d in document.definitions if getattr(d, "operation", None) is not None]
    chosen = [d for d in operations if operation_name is None or (d.name and d.name.value == operation_name)]
    return any(d.operation.value == "mutation" for d in chosen)


# No scalar needs more (a 64-bit integer has 20 characters); past 4,300 digits Python's own int() refuses,
# and graphql-core would put that exception's text into the answer.
MAX_NUMBER_CHARACTERS = 100


def _has_long_number(document: DocumentNode) -> bool:
    """Whether an Int or Float literal is longer than any scalar needs (the parser bounded the tokens)."""
    token = document.loc.start_token if document.loc else None
    while token is not None:
        if token.kind in (TokenKind.INT, TokenKind.FLOAT) and len(token.value or "") > MAX_NUMBER_CHARACTERS:
            return True
        token = token.next
    return False
