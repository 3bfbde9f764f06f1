"""The query-language benchmark: 100,000 posts, filters, search, deep pages by number and by
cursor, an `any` filter, aggregations, and GraphQL lists, each against the bare app doing the same database
work.

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
import secrets
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
FILTER = "filter views[between]+user_id[in]"
SEARCH = f"search={SEARCH_WORD}"
SEARCH_UNCOUNTED = f"search={SEARCH_WORD} count=none"
DEEP = f"page {DEEP_PAGE:,}"
CURSOR = f"cursor at page {DEEP_PAGE:,}"
REST_FILTERED = "filter views[gte]=100"
PAGE_1_UNCOUNTED = "page 1 count=none"
REST_FILTERED_UNCOUNTED = "filter views[gte]=100 count=none"
GRAPHQL_LIST = "graphql postList(first: 15)"
GRAPHQL_FILTERED = "graphql postList filter views>=100"
FILTER_UNCOUNTED = "filter views[between]+user_id[in] count=none"
ANY = "filter any[views between, user_id in] count=none"
SORTED_PAGE_1 = "sort=-views page 1"
SORTED_CURSOR = f"sort=-views cursor at page {DEEP_PAGE:,}"
AGGREGATE = "aggregate group=user_id count,sum,avg"
AGGREGATE_FILTERED = "aggregate views[between] group=user_id"
AGGREGATION = {"group": "user_id", "metrics": "count,sum:views,avg:views"}
# Cases the embedded server answers by reading many documents in Python (the count of the range + in
# filter, ~0.2 s; of the search, ~1 s; any `$or`, the any filter's, ~1 s): more connections would only
# queue them for seconds. A search and a page past the first 10,000 records are expensive queries, which one
# client (one guest address) runs one at a time (service/core/reading/admission.py): more connections would
# be answered 429.
DATABASE_TIMEOUT_MS = 30_000
CONNECTIONS = {FILTER: 4, ANY: 1, SEARCH: 1, SEARCH_UNCOUNTED: 1, DEEP: 1, f"{DEEP} vs page 1": 1, AGGREGATE: 1,
               AGGREGATE_FILTERED: 2}
# Cases of which one request takes seconds there (the any filter's `$or`, a group over all 100,000 posts):
# each run lasts at least this long, or a run would end before its first answer and count none.
MIN_SECONDS = {ANY: 20.0, AGGREGATE: 20.0}


def _get(**params: object) -> tuple[str, str, bytes, dict[str, str]]:
    return "GET", f"{POSTS}?{urlencode(params, safe=',[]')}", b"", {}


def _aggregate(params: dict[str, str]) -> tuple[str, str, bytes, dict[str, str]]:
    return "GET", f"{POSTS}/aggregate?{urlencode(params, safe=',:[]')}", b"", {}


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


def _cursor_at(port: int, page: int, **params: str) -> str:
    """The service's own cursor for the records after page `page - 1` (its answer's next_cursor)."""
    status, body = fetch(HOST, port, *_get(page=page - 1, perPage=PER_PAGE, **params))
    if status != 200 or not body["meta"]["next_cursor"]:
        raise RuntimeError(f"no next_cursor on page {page - 1}: {status}")
    return body["meta"]["next_cursor"]


def _has_filter_argument(port: int) -> bool:
    """Whether the generated schema's postList takes `filter` (added by the GraphQL work)."""
    status, body = fetch(HOST, port, "POST", "/graphql", _graphql(FILTER_PROBE), JSON)
    fields = (((body or {}).get("data") or {}).get("__type") or {}).get("fields") or []
    return any(f["name"] == "postList" and any(a["name"] == "filter" for a in f["args"]) for f in fields)


def _requests(users: list[str], port: int) -> dict[str, tuple[str, str, bytes, dict[str, str]]]:
    """Every request of this benchmark, by case name (the cursors are the service's own)."""
    ranged = {"views[between]": "100,500", "user_id[in]": ",".join(users)}
    return {
        PAGE_1: _get(perPage=PER_PAGE),
        FILTER: _get(perPage=PER_PAGE, **ranged),
        FILTER_UNCOUNTED: _get(perPage=PER_PAGE, **ranged, count="none"),
        ANY: _get(perPage=PER_PAGE, count="none", filter=json.dumps(
            {"any": [{"views": {"between": [100, 500]}}, {"user_id": {"in": users}}]}, separators=(",", ":"))),
        SEARCH: _get(perPage=PER_PAGE, search=SEARCH_WORD),
        SEARCH_UNCOUNTED: _get(perPage=PER_PAGE, search=SEARCH_WORD, count="none"),
        DEEP: _get(page=DEEP_PAGE, perPage=PER_PAGE),
        CURSOR: _get(perPage=PER_PAGE, cursor=_cursor_at(port, DEEP_PAGE)),
        SORTED_PAGE_1: _get(perPage=PER_PAGE, sort="-views"),
        SORTED_CURSOR: _get(perPage=PER_PAGE, sort="-views", cursor=_cursor_at(port, DEEP_PAGE, sort="-views")),
        REST_FILTERED: _get(perPage=PER_PAGE, **{"views[gte]": 100}),
        # What bare answers for the GraphQL lists: the same reads, and a list shows no total.
        PAGE_1_UNCOUNTED: _get(perPage=PER_PAGE, count="none"),
        REST_FILTERED_UNCOUNTED: _get(perPage=PER_PAGE, count="none", **{"views[gte]": 100}),
        AGGREGATE: _aggregate(AGGREGATION),
        AGGREGATE_FILTERED: _aggregate({**AGGREGATION, "views[between]": "100,500"}),
        GRAPHQL_LIST: ("POST", "/graphql", _graphql(f"{{ postList(first: 15) {{ {LIST_FIELDS} }} }}"), JSON),
        GRAPHQL_FILTERED: ("POST", "/graphql",
                           _graphql("{ postList(first: 15, filter: {views: {gte: 100}}) { id title views } }"), JSON),
    }


def _cases(requests: dict, filtered_graphql: bool) -> list[Case]:
    """Service against bare: (name, method, path, body, headers, bare request or None), as in bench.run.
    Bare answers a GraphQL case with the REST request doing the same database work."""
    names = [PAGE_1, FILTER, FILTER_UNCOUNTED, ANY, SEARCH, SEARCH_UNCOUNTED, DEEP, CURSOR, SORTED_PAGE_1,
             SORTED_CURSOR, REST_FILTERED, AGGREGATE, AGGREGATE_FILTERED, GRAPHQL_LIST]
    cases: list[Case] = [(name, *requests[name], None) for name in names if not name.startswith("graphql")]
    cases.append((GRAPHQL_LIST, *requests[GRAPHQL_LIST], requests[PAGE_1_UNCOUNTED]))
    if filtered_graphql:
        cases.append((GRAPHQL_FILTERED, *requests[GRAPHQL_FILTERED], requests[REST_FILTERED_UNCOUNTED]))
    return cases


def _pairs(requests: dict, filtered_graphql: bool) -> list[Case]:
    """Two requests to the service itself, measured alternately like service and bare: the ratios
    the query language is judged by, free of the machine's drift between cases."""
    pairs = [(f"{GRAPHQL_LIST} vs REST list", *requests[GRAPHQL_LIST], requests[PAGE_1_UNCOUNTED])]
    if filtered_graphql:
        pairs.append((f"{GRAPHQL_FILTERED} vs REST", *requests[GRAPHQL_FILTERED], requests[REST_FILTERED_UNCOUNTED]))
    pairs += [(f"{CURSOR} vs page 1", *requests[CURSOR], requests[PAGE_1]),
              (f"{DEEP} vs page 1", *requests[DEEP], requests[PAGE_1]),
              (f"{SORTED_CURSOR} vs page 1", *requests[SORTED_CURSOR], requests[SORTED_PAGE_1])]
    return pairs


def _check_cursor_is_the_deep_page(port: int, requests: dict) -> None:
    pages = {name: [item["id"] for item in fetch(HOST, port, *requests[name])[1]["data"]] for name in (DEEP, CURSOR)}
    if pages[DEEP] != pages[CURSOR]:
        raise RuntimeError(f"the cursor page is not page {DEEP_PAGE}: {pages}")
    sorted_deep = fetch(HOST, port, *_get(page=DEEP_PAGE, perPage=PER_PAGE, sort="-views"))[1]["data"]
    sorted_cursor = fetch(HOST, port, *requests[SORTED_CURSOR])[1]["data"]
    if [item["id"] for item in sorted_deep] != [item["id"] for item in sorted_cursor]:
        raise RuntimeError(f"the sort=-views cursor page is not page {DEEP_PAGE} of that sort")
    print(f"  parity ok: both cursor pages hold the records of page {DEEP_PAGE:,} of their sort", flush=True)


def _measure(cases: list[Case], servers: Servers, args: argparse.Namespace, workdir) -> list[Row]:
    """Each case at `--connections`, or fewer for the database-bound ones (see CONNECTIONS), for
`--duration` or the longer MIN_SECONDS of the slowest ones."""
    rows: list[Row] = []
    for case in cases:
        cap = CONNECTIONS.get(case[0])
        connections = sorted({min(c, cap) for c in args.connections}) if cap else args.connections
        slow = case[0] in MIN_SECONDS
        # A slow case gets no warm-up: the warm-up's last request, abandoned unanswered, would still hold
        # its client's turn (one expensive query at a time) when the measured run starts, and be refused.
        changed = {"connections": connections, "duration": max(args.duration, MIN_SECONDS.get(case[0], 0.0)),
                   "warmup": 0.0 if slow else args.warmup}
        rows += measure_cases([case], servers, argparse.Namespace(**{**vars(args), **changed}), workdir)
    return rows


def _print_pairs(rows: list[Row]) -> None:
    print("\nWithin the service, measured alternately (A vs B): req/s, p50 ms, server CPU ms per request")
    print(f"{'A vs B':<58}{'conns':>6} | {'A req/s':>8}{'p50':>7}{'CPU':>6} | {'B req/s':>8}{'p50':>7}{'CPU':>6} | "
          f"{'A÷B req/s':>9}{'B÷A p50':>9}")
    for name, connections, a, b, _ in rows:
        print(f"{name:<58}{connections:>6} | {a.load.rps:>8.0f}{a.load.p50_ms:>7.1f}{a.cpu_ms_per_request:>6.2f} | "
              f"{b.load.rps:>8.0f}{b.load.p50_ms:>7.1f}{b.cpu_ms_per_request:>6.2f} | "
              f"{a.load.rps / b.load.rps if b.load.rps else 0:>9.2f}"
              f"{b.load.p50_ms / a.load.p50_ms if a.load.p50_ms else 0:>9.2f}")
    print("Targets: GraphQL list ÷ REST list >= 0.8 (req/s); the cursor page within 1.5x of page 1 "
          "(A÷B req/s >= 0.67).")


def _query(workspace: Workspace, args: argparse.Namespace) -> int:
    print(f"temp dir {workspace.dir}; client {args.client}; {args.processes} process(es); "
          f"{args.rounds} x {args.duration:g} s per side and case; "
          f"load average before start {os.getloadavg()[0]:.2f}", flush=True)
    database = workspace.start_database()
    # The embedded server's scans (a count over a search: about a second) are measured, not refused by the
    # service's database timeout (2 s by default) under load; bare has none.
    # One cursor secret for both servers: the bare app unseals the service's cursors to read their positions.
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": DB_NAME,
           "RESTIFY_DATABASE_TIMEOUT_MS": str(DATABASE_TIMEOUT_MS),
           "RESTIFY_QUERY_CURSOR_SECRET": secrets.token_hex(32),
           # What a query costs is measured, not the rests after expensive ones (a fairness rule with
           # settings of its own: `query.expensive_rest`, `query.expensive_share`); turns still hold.
           "RESTIFY_QUERY_EXPENSIVE_REST": "0", "RESTIFY_QUERY_EXPENSIVE_SHARE": "1"}
    print(f"seeding 100 users, 10 tags, {args.posts:,} posts ...", flush=True)
    users = asyncio.run(_seed(database.uri, env, args.posts))
    servers: Servers = start_servers(workspace, env, args)  # serve creates the index plan before it answers
    filtered_graphql = _has_filter_argument(servers.service_port)
    if not filtered_graphql:
        print(f"  {GRAPHQL_FILTERED}: skipped: no filter argument", flush=True)
    requests = _requests(users, servers.service_port)
    cases = [c for c in _cases(requests, filtered_graphql) if selected(c[0], args.only)]
    pairs = [c for c in _pairs(requests, filtered_graphql) if selected(c[0], args.only)]
    check_parity(HOST, servers.service_port, servers.bare_port, cases)
    _check_cursor_is_the_deep_page(servers.service_port, requests)
    rows = _measure(cases, servers, args, workspace.dir)
    itself = Servers(servers.service, servers.service, servers.service_port, servers.service_port, servers.db_pid)
    pair_rows = _measure(pairs, itself, args, workspace.dir)
    print_throughput(rows, args)
    print_cpu(rows, args)
    _print_pairs(pair_rows)
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
