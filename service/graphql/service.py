"""Holds the endpoint being served and swaps in a rebuilt one atomically: requests
already running finish on the schema they started with."""
import logging

from service.core.declarations.app import Restify
from service.graphql.config import GraphQLConfig, load_graphql_config
from service.graphql.executor import GraphQLEndpoint

log = logging.getLogger("restify.graphql")


class GraphQLService:
    def __init__(self, app: Restify, config: GraphQLConfig | None = None) -> None:
        self.app = app
        self.config = config or load_graphql_config(app.settings.app_dir)
        self.endpoint = GraphQLEndpoint(app, self.config)

    def reload(self) -> bool:
        """Rebuilds from the current registry and schema file; keeps the old one on error."""
        try:
            endpoint = GraphQLEndpoint(self.app, self.config)
        except Exception as error:  # a broken schema file or resolver must not take the endpoint down
            log.error("GraphQL schema not reloaded, keeping the previous one: %s", error)
            return False
        self.endpoint = endpoint
        return True
