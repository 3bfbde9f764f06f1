"""Ranked text search: which fields a repository's text index holds, whether a search may use it,
and what `sort=relevance` asks for.

On a server sent `$text` (MongoDB), a search over a repository with `searchable(text=True)` fields is
one `$text` over them, and `sort=relevance` orders its records by MongoDB's score, then by id. The
embedded server keeps the substring test and does not rank (`operations/crud.py` answers 400).
"""
from collections.abc import Mapping
from typing import TYPE_CHECKING

from service.core.declarations import Context, Field
from service.core.kernel import refuse
from storage import RELEVANCE, Collection, Filter

if TYPE_CHECKING:
    from service.core.declarations import Resource
    from service.core.reading.query import IndexQuery


def text_fields(resource: "Resource") -> tuple[str, ...]:
    """The fields of the repository's text index (`searchable(text=True)`), whoever asks."""
    return tuple(f.name for f in resource.fields(Context(action="declaration")) if f.is_text)


def text_search(resource: "Resource", fields: list[Field]) -> bool:
    """Whether a search by `fields` (the user's view) looks in every field of the text index, so that
    it can be a `$text` search (a field hidden from the user is in the index too)."""
    texts = text_fields(resource)
    return bool(texts) and set(texts) <= {f.name for f in fields if f.is_searchable}


def ranked(query: "IndexQuery") -> bool:
    """Whether `query` asks for the most relevant records first (`sort=relevance`)."""
    return bool(query.sort) and query.sort[0][0] == RELEVANCE


def relevance_sort(query: "IndexQuery", params: Mapping[str, str]) -> None:
    """`sort=relevance`: first, without a direction, with a search, by page number (a score is no stored
    value a cursor could hold); its key becomes storage's RELEVANCE."""
    names = [name for name, _ in query.sort]
    if "relevance" not in names:
        return
    if names[0] != "relevance" or params.get("sort", "").lstrip().startswith(("-", "+")):
        refuse("sort", "sort=relevance orders the most relevant records first: it comes first, without a sign.")
    if not query.search:
        refuse("sort", "sort=relevance orders the records a search finds: send search= too.")
    if query.cursor is not None:
        refuse("cursor", "sort=relevance pages by page=, not by cursor: a relevance is not a stored value.")
    query.sort[0] = (RELEVANCE, -1)


async def refuse_unranked(query: "IndexQuery", collection: Collection, where: Filter) -> None:
    """A 400 for `sort=relevance` on a search the database does not rank."""
    if ranked(query) and not await collection.ranks(where):
        refuse("sort", "sort=relevance cannot order this search: " + (
            "the database does not rank text (the embedded server tests substrings); sort by a field instead."
            if where.by_text() else "it does not look in every text field of the repository."))
