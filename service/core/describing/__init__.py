"""The JSON Schemas and parameters the doors publish.

May import: kernel, declarations, reading, identity, writing (docs/architecture.md: the layers and their rules).
"""
from service.core.describing.aggregates import AGGREGATE_ANSWER, aggregate_schemas
from service.core.describing.schemas import write_body

__all__ = ["AGGREGATE_ANSWER", "aggregate_schemas", "write_body"]
