"""GraphiQL: the page a browser gets when it opens `/graphql` (see `service.http.explorer.wants_page`),
on the explorer's assets. It runs queries on the same path, subscriptions over its WebSocket."""
from service.http.base import JsonHandler
from service.http.explorer import Page, send_page

STYLES = ("graphiql.min.css", "explorer.css")
SCRIPTS = ("react.production.min.js", "react-dom.production.min.js", "graphiql.min.js", "graphiql-init.js")


async def send_graphiql(handler: JsonHandler, endpoint: str) -> None:
    await send_page(handler, Page("Restify GraphQL", "graphiql", STYLES, SCRIPTS, {"endpoint": endpoint}))
