"""`/graphql`: GraphQL over HTTP (POST JSON, GET for queries), same bearer auth as REST; a browser
opening it (GET for HTML, no `query`) gets GraphiQL while the explorer is enabled.

A POST body over `graphql.max_query_bytes` is a 413 before it is read whole; on GET, a `query`
parameter over it is a 414 (it travels in the URI)."""
from typing import Any

from service.core.declarations.app import Restify
from service.core.declarations.context import Context
from service.core.kernel.errors import ResponseTooLarge, UriTooLong
from service.graphql.executor import too_large
from service.graphql.graphiql import send_graphiql
from service.graphql.service import GraphQLService
from service.graphql.websocket import websocket_routes
from service.http.base import JsonHandler
from service.http.json_bodies import decode_json
from service.http.explorer import wants_page


class GraphQLHandler(JsonHandler):
    door = "graphql"

    def initialize(self, app: Restify, graphql: GraphQLService) -> None:  # type: ignore[override]
        super().initialize(app)
        self.graphql = graphql

    @property
    def limit(self) -> int:
        return int(self.app.settings.get("graphql", "max_query_bytes"))

    async def get(self) -> None:
        if wants_page(self.request, self.app.settings):
            await send_graphiql(self, self.request.path)
            return
        params = self.params()
        if len(params.get("query", "").encode()) > self.limit:
            raise UriTooLong("The GraphQL query is too long.")
        variables: Any = None
        if params.get("variables"):
            variables = decode_json(params["variables"].encode(), "The variables parameter")
        context = self.context()
        body = await self.graphql.endpoint.run(params.get("query"), variables, params.get("operationName"),
                                               context, allow_mutations=False, measured=True)
        await self.send_answer(body, context)

    async def post(self) -> None:
        payload = self.payload()
        endpoint = self.graphql.endpoint  # one schema for the whole request, even if a reload lands meanwhile
        context = self.context()
        body = await endpoint.run(payload.get("query"), payload.get("variables"), payload.get("operationName"),
                                  context, measured=True)
        await self.send_answer(body, context)

    async def send_answer(self, body: dict[str, Any], context: Context) -> None:
        """`body`, or GraphQL's error of the budget when the answer is over the budget the door measures."""
        try:
            await self.send_json(body, measured=context.budget)
        except ResponseTooLarge:
            assert context.budget is not None and context.budget.limit is not None  # only a budget refuses
            await self.send_json(too_large(context.budget.limit))


def graphql_routes(app: Restify, graphql: GraphQLService | None = None, path: str | None = None) -> list[Any]:
    """URL specs serving GraphQL (WebSocket upgrades first, for subscriptions); add them to any
    Tornado application."""
    graphql = graphql or GraphQLService(app)
    path = path or graphql.config.get("schema", "endpoint")
    return [*websocket_routes(app, graphql, path), (path, GraphQLHandler, {"app": app, "graphql": graphql}, path)]
