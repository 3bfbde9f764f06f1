"""The MCP index tools obey the query limits of every door (tests/http/test_expensive_queries.py):
`in` lists of at most `query.max_in_values` values, search texts of at most `query.max_search_length`
characters, and expensive queries that take turns; each refusal is an error result."""
from service.core.reading.admission import admission
from tests.http.test_expensive_queries import own_turn
from tests.mcp.conftest import error, ok

TOOL = "posts-index-tool"


async def test_an_in_list_over_the_limit_is_an_error_before_any_read(connect, ann, commands):
    message = "The filter.views.in filter may not have more than 1000 values (query.max_in_values)."
    async with connect(ann["token"]) as session:
        commands.reset()
        result = await session.call_tool(TOOL, {"filter": {"views": {"in": list(range(140_000))}}})
        assert error(result) == {"message": message, "errors": {"filter.views.in": [message]}}
        assert [read for read in commands.reads() if read[1] == "posts"] == []
        assert ok(await session.call_tool(TOOL, {"filter": {"views": {"nin": list(range(1000))}}}))["data"] == []


async def test_a_search_text_over_the_limit_is_an_error(connect, ann):
    async with connect(ann["token"]) as session:
        result = await session.call_tool(TOOL, {"search": "s" * 256})
    assert error(result) == {"message": "The search text may not be longer than 255 characters.",
                             "errors": {"search": ["The search may not be greater than 255 characters."]}}


async def test_an_expensive_index_call_waits_for_its_turn(connect, restify, ann):
    async with connect(ann["token"]) as session:
        async with admission(restify).turn(f"user:{ann['id']}", 10, "held"):
            result = await session.call_tool(TOOL, {"search": "a"})
            assert error(result) == {"message": own_turn("a search through related records")}
            result = await session.call_tool(TOOL, {"filter": {"views": {"in": list(range(101))}}})
            assert error(result) == {"message": own_turn("an in list of more than 100 values on views")}
            assert ok(await session.call_tool(TOOL, {"sort": "-views"}))["data"] == []
        assert ok(await session.call_tool(TOOL, {"search": "a"}))["data"] == []
