"""The query-language benchmark: 100,000 posts, filters, search, deep pages by number and by
cursor, and GraphQL lists, each against the bare app doing the same database work.

    python -m bench.query [--posts 100000] [--connections 16] [--duration 5] [--rounds 2]
                          [--processes 1] [--client auto|wrk|python] [--only NAME]

Seeds 100 users and 10 tags as `bench.run` does, then `--posts` posts in insert batches; starts
`restify serve` (which creates the index plan at start-up, so both servers read an indexed
collection) and `bench/bare.py`; checks that both answer every case with the same records (and
that the cursor page is page 2,000); then measures each case like `bench.run` and prints, besides
the usual tables, the ratios the query language is judged by: cursor page ÷ page 1, and GraphQL
list ÷ REST list (same records, same run).
"""
import argparse
import asyncio
import json
import os
import sys
from urllib.parse import urlencode

from bench.parity import Case, check_parity, fetch
from bench.procs import Workspace, in_workspace
from bench.report import Row, print_cpu, print_throughput
from bench.run import DB_NAME, HOST, Servers, add_load_arguments, check_load_arguments, core_app, measure_cases, \
    selected, start_servers

POSTS = "/api/restify/posts"
PER_PAGE = 15
DEEP_PAGE = 2000
SEARCH_WORD = "cursor"  # one of the seeder's words: in about one title in six
LIST_FIELDS = "id title body views published user_id created_at updated_at"  # every attribute REST returns
JSON = {"Content-Type": "application/json"}
FILTER_PROBE = '{ __type(name: "Query") { fields { name args { name } } } }'

PAGE_1 = "page 1"
CURSOR = f"cursor at page {DEEP_PAGE:,}"
GRAPHQL_LIST = "graphql postList(first: 15)"
GRAPHQL_FILTERED = "graphql postList filter views>=100"
REST_FILTERED = "filter views[gte]=100"


def _get(**params: object) -> tuple[str, str, bytes, dict[str, str]]:
    return "GET", f"{POSTS}?{urlencode(params, safe=',[]')}", b"", {}


def _graphql(query: str) -> bytes:
    return json.dumps({"query": query, "variables": {}}).encode()


async def _seed(uri: str, env: dict[str, str], posts: int) -> list[str]:
    """100 users, 10 tags and `posts` posts; returns the ids of three users."""
    from bench.data import seed, seed_many_posts
    from storage import Filter

    async with core_app(uri, env) as app:
        await seed(app, users=100, posts=0, comments=0)
        await seed_many_posts(app, posts)
        return [u["id"] for u in await app.db.collection("users").find(Filter(), sort=[("id", 1)], limit=3)]


def _cursor_at(port: int, page: int) -> str:
    """The service's own cursor for the records after page `page - 1` (its answer's next_cursor)."""
    status, body = fetch(HOST, port, *_get(page=page - 1, perPage=PER_PAGE))
    if status != 200 or not body["meta"]["next_cursor"]:
        raise RuntimeError(f"no next_cursor on page {page - 1}: {status}")
    return body["meta"]["next_cursor"]


def _has_filter_argument(port: int) -> bool:
    """Whether the generated schema's postList takes `filter` (DESIGN §12; added by the GraphQL work)."""
    status, body = fetch(HOST, port, "POST", "/graphql", _graphql(FILTER_PROBE), JSON)
    fields = (((body or {}).get("data") or {}).get("__type") or {}).get("fields") or []
    return any(f["name"] == "postList" and any(a["name"] == "filter" for a in f["args"]) for f in fields)


def _cases(users: list[str], cursor: str, filtered_graphql: bool) -> list[Case]:
    """(name, method, path, body, headers, bare request or None), as in bench.run."""
    page_1 = _get(perPage=PER_PAGE)
    rest_filtered = _get(perPage=PER_PAGE, **{"views[gte]": 100})
    cases: list[Case] = [
        (PAGE_1, *page_1, None),
        ("filter views[between]+user_id[in]",
         *_get(perPage=PER_PAGE, **{"views[between]": "100,500", "user_id[in]": ",".join(users)}), None),
        (f"search={SEARCH_WORD}", *_get(perPage=PER_PAGE, search=SEARCH_WORD), None),
        (f"search={SEARCH_WORD} count=none", *_get(perPage=PER_PAGE, search=SEARCH_WORD, count="none"), None),
        (f"page {DEEP_PAGE:,}", *_get(page=DEEP_PAGE, perPage=PER_PAGE), None),
        (CURSOR, *_get(perPage=PER_PAGE, cursor=cursor), None),
        (REST_FILTERED, *rest_filtered, None),
        (GRAPHQL_LIST, "POST", "/graphql", _graphql(f"{{ postList(first: 15) {{ {LIST_FIELDS} }} }}"), JSON, page_1),
    ]
    if filtered_graphql:
        cases.append((GRAPHQL_FILTERED, "POST", "/graphql",
                      _graphql("{ postList(first: 15, filter: {views: {gte: 100}}) { id title views } }"), JSON,
                      rest_filtered))
    return cases


def _check_cursor_is_the_deep_page(port: int, cases: list[Case]) -> None:
    by_name = {c[0]: c for c in cases}
    pages = {}
    for name in (f"page {DEEP_PAGE:,}", CURSOR):
        if name in by_name:
            _, method, path, body, headers, _ = by_name[name]
            pages[name] = [item["id"] for item in fetch(HOST, port, method, path, body, headers)[1]["data"]]
    if len(pages) == 2 and len(set(map(tuple, pages.values()))) != 1:
        raise RuntimeError(f"the cursor page is not page {DEEP_PAGE}: {pages}")
    if len(pages) == 2:
        print(f"  parity ok: the cursor page holds the records of page {DEEP_PAGE:,}", flush=True)


def _print_ratios(rows: list[Row]) -> None:
    """The targets of the query language, from the rows of this run."""
    by = {(name, connections): (service, bare) for name, connections, service, bare in rows}
    print("\nRatios within this run (req/s; p50 in brackets for the latency ratios)")
    for connections in sorted({c for _, c, _, _ in rows}):
        def ratio(a: str, b: str, side: int, label: str, target: str) -> None:
            if (a, connections) in by and (b, connections) in by:
                x, y = by[(a, connections)][side].load, by[(b, connections)][side].load
                print(f"  x{connections:<4}{label:<52}{x.rps / y.rps if y.rps else 0:>6.2f}"
                      f"   (p50 {x.p50_ms:.1f} / {y.p50_ms:.1f} ms = {x.p50_ms / y.p50_ms if y.p50_ms else 0:.2f})"
                      f"   target {target}")
        ratio(GRAPHQL_LIST, PAGE_1, 0, "service: GraphQL list ÷ REST list", ">= 0.8")
        ratio(GRAPHQL_FILTERED, REST_FILTERED, 0, "service: filtered GraphQL list ÷ filtered REST list", ">= 0.8")
        ratio(PAGE_1, CURSOR, 0, "service: cursor page at 2,000 vs page 1 (page 1 ÷ cursor)", "<= 1.5")
        ratio(PAGE_1, CURSOR, 1, "bare:    cursor page at 2,000 vs page 1 (page 1 ÷ cursor)", "-")
        ratio(PAGE_1, f"page {DEEP_PAGE:,}", 0, "service: page 2,000 by number vs page 1 (page 1 ÷ it)", "-")


def _query(workspace: Workspace, args: argparse.Namespace) -> int:
    print(f"temp dir {workspace.dir}; client {args.client}; {args.processes} process(es); "
          f"{args.rounds} x {args.duration:g} s per side and case; "
          f"load average before start {os.getloadavg()[0]:.2f}", flush=True)
    database = workspace.start_database()
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": DB_NAME}
    print(f"seeding 100 users, 10 tags, {args.posts:,} posts ...", flush=True)
    users = asyncio.run(_seed(database.uri, env, args.posts))
    servers: Servers = start_servers(workspace, env, args)  # serve creates the index plan before it answers
    filtered_graphql = _has_filter_argument(servers.service_port)
    if not filtered_graphql:
        print(f"  {GRAPHQL_FILTERED}: skipped: no filter argument", flush=True)
    cases = [c for c in _cases(users, _cursor_at(servers.service_port, DEEP_PAGE), filtered_graphql)
             if selected(c[0], args.only)]
    check_parity(HOST, servers.service_port, servers.bare_port, cases)
    _check_cursor_is_the_deep_page(servers.service_port, cases)
    rows = measure_cases(cases, servers, args, workspace.dir)
    print_throughput(rows, args)
    print_cpu(rows, args)
    _print_ratios(rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.query", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_arguments(parser, connections="16")
    parser.add_argument("--posts", type=int, default=100_000, help="posts to seed (default 100,000)")
    args = check_load_arguments(parser, parser.parse_args(argv))
    if args.posts < (DEEP_PAGE + 1) * PER_PAGE:
        parser.error(f"--posts must be at least {(DEEP_PAGE + 1) * PER_PAGE:,} for page {DEEP_PAGE:,} to exist")
    return in_workspace("restify-query-", lambda workspace: _query(workspace, args))


if __name__ == "__main__":
    sys.exit(main())
