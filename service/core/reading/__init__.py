"""Reading records as a user may see them: visibility, query parsing, filters, cursors,
relation loading, fieldsets, serializing, and the admission of expensive queries.

May import: kernel, declarations (docs/architecture.md: the layers and their rules).
"""
from service.core.reading.admission import estimate_seconds, owner, taking_turns
from service.core.reading.computed import ComputeContext, computed_fields, fill
from service.core.reading.cursors import Page, once, cursor_binding, cursor_key, read_cursor_page
from service.core.reading.fieldsets import Fieldsets, apply_fieldsets, parse_fieldsets, selectable
from service.core.reading.filter_objects import FILTER, as_parameters, index_query, query_text
from service.core.reading.grouping import (AGGREGATE_PARAMETERS, Aggregation, aggregatable, aggregation_answer,
                                         declares_aggregations, group_keys, parse_aggregation)
from service.core.reading.loading import load_related, require_readable, with_eager
from service.core.reading.envelope import page_envelope
from service.core.reading.pages import charged_page, page_records
from service.core.reading.planning import refuse_before_reading
from service.core.reading.presenting import asked_relations, serialize, with_relations
from service.core.reading.query import IndexQuery, RelationTree, max_related_depth
from service.core.reading.ranking import ranked, refuse_unranked, text_fields
from service.core.reading.serializer import (Attributes, flat_object, record_meta, resource_object, visible,
                                            with_relationships)
from service.core.reading.through import bindable, read_through_page, relation_key, resolve, search_within
from service.core.reading.visibility import Visible, forced, trashed_asked, visibility_of

__all__ = [
    "AGGREGATE_PARAMETERS", "Aggregation", "aggregatable", "aggregation_answer", "declares_aggregations",
    "group_keys", "parse_aggregation",
    "bindable", "once", "resolve",
    "Attributes", "ComputeContext", "FILTER", "Fieldsets", "IndexQuery", "Page", "RelationTree", "Visible",
    "apply_fieldsets",
    "as_parameters", "asked_relations", "charged_page", "page_envelope", "page_records",
    "computed_fields", "cursor_binding", "cursor_key", "fill", "flat_object",
    "forced",
    "index_query", "load_related", "max_related_depth", "parse_fieldsets", "query_text", "read_cursor_page",
    "read_through_page", "record_meta", "refuse_before_reading", "relation_key", "require_readable",
    "owner", "resource_object", "search_within", "selectable", "serialize", "taking_turns", "trashed_asked",
    "estimate_seconds", "visibility_of", "visible", "with_eager", "with_relations", "with_relationships",
    "ranked", "refuse_unranked", "text_fields",
]
