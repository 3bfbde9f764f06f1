"""The plain-field executor answers exactly as graphql-core's own, errors included: every query here
runs through both, and the results (data, errors, paths, messages) must be identical."""
import pytest
from graphql import build_schema, execute, parse, validate
from graphql.execution.executor import Executor

from service.graphql.fast import PlainFieldExecutor

SCHEMA = build_schema("""
    enum Color { RED GREEN }
    type Item {
      id: ID!
      name: String
      title: String!
      count: Int
      ratio: Float
      flag: Boolean
      color: Color
      tags: [String]
      shout(suffix: String = "!"): String
      child: Item
      required_child: Item!
    }
    type Query { items: [Item!]! item: Item strictItems: [Item!] cleanItems: [Item!]! maybeItems: [Item] }
""")

ITEMS = [
    {"id": 1, "name": "one", "title": "One", "count": 3, "ratio": 2, "flag": True, "color": "RED",
     "tags": ["a", None], "child": {"id": "c1", "title": "Child"}, "required_child": {"id": "r", "title": "R"}},
    {"id": "2", "name": None, "title": "Two", "count": 2.0, "ratio": 0.5, "flag": False, "color": "GREEN",
     "tags": None, "child": None, "required_child": {"id": "r2", "title": "R2"}},
    # Values the scalars refuse, and a callable (the default resolver calls it).
    {"id": "3", "name": lambda info: "called", "title": "Three", "count": "many", "ratio": "x", "flag": "yes",
     "color": "BLUE", "tags": [], "child": None, "required_child": {"id": "r3", "title": None}},
    # A non-null field that is missing: the error propagates to the nearest nullable parent.
    {"id": "4", "name": "four", "count": 2**40, "required_child": {"id": "r4", "title": "R4"}},
]

# Values every scalar takes as they are: whole objects complete in the executor's one loop.
CLEAN = [
    {"id": 1, "name": "one", "title": "One", "count": 3, "ratio": 2, "flag": True, "color": "RED"},
    {"id": "2", "name": None, "title": "Two", "count": 2.0, "ratio": 0.5, "flag": False, "color": "GREEN"},
    {"id": "3", "title": "Three", "count": -1, "ratio": 1e300, "flag": True},  # missing nullable fields
]

ROOT = {
    "items": ITEMS,
    "item": ITEMS[0],
    "strictItems": ITEMS,
    "cleanItems": CLEAN,
    "maybeItems": [CLEAN[0], None, CLEAN[1]],
}


def _shout(source, info, suffix="!"):
    return f"{source['title']}{suffix}"


SCHEMA.get_type("Item").fields["shout"].resolve = _shout

QUERIES = [
    "{ items { id name title count ratio flag color tags } }",
    "{ items { __typename id alias: title again: title title } }",
    "{ item { ...F child { ...F } } } fragment F on Item { id name title }",
    "query($skip: Boolean!) { items { id name @skip(if: $skip) title @include(if: true) } }",
    "{ items { id shout shout2: shout(suffix: \"?\") } }",
    "{ items { id required_child { id title } } }",
    "{ strictItems { id title } }",
    "{ item { child { child { id } } required_child { title } } }",
    "{ cleanItems { id name title count ratio flag color } }",
    "{ cleanItems { a: title b: title id title again: id } }",
    "{ cleanItems { ...F } } fragment F on Item { color id count }",
    "{ cleanItems { id __typename title } }",
    "{ cleanItems { id title tags shout } }",
    "{ maybeItems { id title } }",
    "{ cleanItems @include(if: true) { id title } }",
]


def _run(executor_class, query: str) -> dict:
    document = parse(query)
    assert validate(SCHEMA, document) == []
    result = execute(SCHEMA, document, root_value=ROOT, variable_values={"skip": True},
                     executor_class=executor_class)
    return result.formatted


@pytest.mark.parametrize("query", QUERIES)
def test_same_answers_as_graphql_core(query):
    assert _run(PlainFieldExecutor, query) == _run(Executor, query)


def test_the_comparison_sees_errors_and_coercions():
    # The cases above must exercise the error paths, or the comparison proves little.
    answer = _run(PlainFieldExecutor, QUERIES[0])
    messages = " ".join(error["message"] for error in answer["errors"])
    assert "Int cannot represent non-integer value: 'many'" in messages
    assert "Cannot return null for non-nullable field Item.title." in messages
    assert answer["data"] is None  # a null in [Item!]! reaches the root
    first = _run(PlainFieldExecutor, QUERIES[2])["data"]["item"]
    assert first == {"id": "1", "name": "one", "title": "One", "child": {"id": "c1", "name": None, "title": "Child"}}


def test_plain_objects_are_completed_in_one_loop_with_the_same_answer():
    query = "{ cleanItems { id title again: title count color } }"
    calls = []

    class Counting(PlainFieldExecutor):
        def execute_field(self, *args, **kwargs):
            calls.append(args[2][0].node.name.value)
            return super().execute_field(*args, **kwargs)

    assert _run(Counting, query) == _run(Executor, query)
    assert calls == ["cleanItems"]  # no field of the records went through execute_field
    calls.clear()
    assert _run(Counting, "{ item { id title } }") == _run(Executor, "{ item { id title } }")
    assert calls == ["item"]
    assert _run(Counting, query)["data"]["cleanItems"][2] == {
        "id": "3", "title": "Three", "again": "Three", "count": -1, "color": None}


def test_a_compiled_writer_writes_what_plain_object_writes():
    from service.graphql.fast import compiled_writer, plain_object, plain_plan
    from service.graphql.scalars import GraphQLLong, bind_scalars

    schema = bind_scalars(build_schema("""
        scalar Long
        enum Color { RED GREEN }
        type Row { id: ID! name: String title: String! count: Int ratio: Float flag: Boolean color: Color
                   views: Long big: Long! }
        type Query { rows: [Row!]! }
    """))
    row_type = schema.type_map["Row"]
    assert row_type.fields["views"].type.coerce_output_value is GraphQLLong.coerce_output_value
    query = parse("{ rows { id name again: name title count ratio flag color views big } }")
    nodes = query.definitions[0].selection_set.selections[0].selection_set.selections
    plan = plain_plan(row_type, (((n.alias or n.name).value, n) for n in nodes))
    write = compiled_writer(plan)
    good = {"id": "1", "name": "a", "title": "A", "count": 3, "ratio": 0.5, "flag": True, "color": "RED",
            "views": 2 ** 40, "big": -5}
    variations = [{}, {"id": 7}, {"name": None}, {"name": 3}, {"title": None}, {"count": 2.0}, {"count": 2 ** 31},
                  {"count": "many"}, {"ratio": 2}, {"ratio": float("nan")}, {"flag": 0}, {"color": "BLUE"},
                  {"views": None}, {"views": 7.0}, {"views": True}, {"views": "12"}, {"views": 2 ** 63},
                  {"big": None}, {"big": 2 ** 63 - 1}, {"big": -(2 ** 63) - 1}, {"name": lambda: "called"}]
    written = [write({**good, **change}) for change in variations]
    assert written == [plain_object({**good, **change}, plan) for change in variations]
    assert written[0] == {"id": "1", "name": "a", "again": "a", "title": "A", "count": 3, "ratio": 0.5,
                          "flag": True, "color": "RED", "views": "1099511627776", "big": "-5"}
    refused = [variations[position] for position, row in enumerate(written) if row is None]
    assert [list(change.items())[0][0] for change in refused] == [
        "title", "count", "count", "ratio", "color", "views", "views", "big", "big", "name"]
    assert written[variations.index({"views": 7.0})]["views"] == "7"
    assert written[variations.index({"flag": 0})]["flag"] is False
