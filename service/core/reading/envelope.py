"""What frames an index page's records: its meta (page, totals, cursors) and its links."""
from functools import lru_cache
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from service.core.reading.cursors import Page
from service.core.reading.filter_objects import FILTER, as_parameters
from service.core.reading.query import IndexQuery


def page_envelope(params: Mapping[str, Any], extras: Mapping[str, Any], query: IndexQuery, page: Page,
                  total: int | None, count: int) -> dict[str, Any]:
    """The answer of a page of `count` records, with an empty list of records (the caller fills it);
    `params` and `extras`: the request's (`Context`)."""
    by_page = page.skip is not None
    last_page = max(1, -(-total // query.per_page)) if total is not None and by_page else None
    path = extras.get("url", "")
    repeated = extras.get("repeated") or {}
    # The other parameters are encoded once (repeated ones with every value); `page` or `cursor` goes last.
    kept = _encoded(tuple((k, value) for k, v in params.items() if k not in ("page", "cursor")
                          for value in repeated.get(k) or [v]) + tuple(as_parameters(extras.get(FILTER))))
    prefix = f"{path}?{kept}&" if kept else f"{path}?"

    def link(page_number: int) -> str:
        return f"{prefix}page={page_number}"

    def cursor_link(cursor: str | None) -> str | None:
        return f"{prefix}{urlencode({'cursor': cursor})}" if cursor is not None else None

    first: str | None
    if by_page:
        more = query.page < last_page if last_page is not None else page.more
        first, prev, next_ = link(1), link(query.page - 1) if query.page > 1 else None, \
            link(query.page + 1) if more else None
    else:
        first, prev, next_ = cursor_link(""), cursor_link(page.prev_cursor), cursor_link(page.next_cursor)
    return {
        "meta": {
            "current_page": query.page if by_page else None,
            "from": page.skip + 1 if page.skip is not None and count else None,
            "last_page": last_page,
            "path": path,
            "per_page": query.per_page,
            "to": page.skip + count if page.skip is not None and count else None,
            "total": total,
            "next_cursor": page.next_cursor,
            "prev_cursor": page.prev_cursor,
        },
        "links": {
            "first": first,
            "last": link(last_page) if last_page is not None else None,
            "prev": prev,
            "next": next_,
            "path": path,
        },
        "data": [],
    }


def _encoded(parameters: tuple[tuple[str, Any], ...]) -> str:
    try:
        return _query_text(parameters)
    except TypeError:  # a value that is no text nor number (an MCP tool's argument may be a list)
        return urlencode(parameters)


@lru_cache(maxsize=1024)
def _query_text(parameters: tuple[tuple[str, Any], ...]) -> str:
    # The same few parameters come again and again (`perPage=15`): each spelling is encoded once.
    return urlencode(parameters)
