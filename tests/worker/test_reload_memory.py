"""A live reload in a process that froze its start-up objects (as `restify serve` does) lets the
replaced GraphQL schema be collected: frozen objects are never collected, so each reload would
otherwise keep one more schema for the life of the process."""
import gc
import weakref

import pytest

from service.console.watching import reload
from service.graphql.service import GraphQLService


@pytest.fixture
def frozen():
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def test_the_replaced_schema_is_collected_after_a_reload_in_a_frozen_process(restify, frozen):
    graphql = GraphQLService(restify)
    gc.collect()
    gc.freeze()  # the endpoint is part of what start-up built
    replaced = weakref.ref(graphql.endpoint.schema.get_type("Post"))  # Post <-> User: only the collector frees it
    assert reload(restify, graphql)
    gc.collect()
    assert replaced() is None
    assert gc.get_freeze_count() > 0  # frozen again, new objects included
