"""The OpenAPI 3.1 document of the REST API, built from the same repository declarations
that REST, GraphQL and MCP serve (`GET /api/restify/openapi.json`, `restify openapi`).

    resources.py    one repository's component schemas: resource object, envelope, bodies
    parameters.py   index / show / profile query parameters and the id path parameter
    components.py   error bodies and responses, pagination parts, the bearer scheme
    paths.py        the path items of every route the service serves
    document.py     the assembled document, and its JSON cached per registry object
    handler.py      `GET <prefix>/openapi.json` and its route
"""
from service.openapi.document import build_document, document_json

__all__ = ["build_document", "document_json"]
