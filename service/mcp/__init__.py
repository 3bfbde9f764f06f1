"""MCP tools for AI agents: the repositories' operations as tools, over Streamable HTTP
(`/mcp`, same port as the REST API) and stdio (`restify mcp`).

    tools.py      which tools the current registry offers, with descriptions
    schemas.py    their input JSON Schemas, from fields and rules
    server.py     the low-level SDK server: tools/list, tools/call -> service.core.operations.crud
    guard.py      guardrails: annotations, read-only mode, preview-then-confirm before a delete
    limits.py     `mcp.max_result_bytes`: results cut to a size an agent can read
    transport.py  the Tornado handler bridging /mcp to the SDK's ASGI session manager
    stdio.py      `restify mcp`: the same server over stdin/stdout, token from RESTIFY_TOKEN
"""
from service.mcp.transport import McpEndpoint, endpoints, mcp_routes

__all__ = ["McpEndpoint", "endpoints", "mcp_routes"]
