"""The benchmark: the service against a bare Tornado + Motor app doing the same database work, and
against Eve, a peer.

    python -m bench.run [--connections 16,64] [--duration 5] [--rounds 2] [--processes 1]
                        [--client auto|wrk|python] [--only NAME]

Starts an embedded nx-27017 in a temp dir, seeds 100 users / 1,000 posts / 5,000 comments,
starts `restify serve --processes N`, `bench/bare.py` with N processes and, when the `bench` extra is
installed, Eve on gunicorn with N workers (`bench/eve_app.py`: the index, a single post and a store,
with token auth reading the database), checks service and bare answer alike, then loads each with
keep-alive clients and prints req/s, p50, p99, the ratios service ÷ bare and service ÷ Eve, and the CPU
seconds the servers and the database used in each run.
Every process it starts is stopped at the end, on error and on Ctrl-C too.
"""
import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.load import LoadResult, Target, run_load, wrk_available
from bench.parity import Case, check_parity, fetch
from bench.procs import (
    ROOT, Managed, Workspace, command_line, descendants, in_workspace, machine_busy_seconds, total_cpu,
)
from bench.report import Measurement, Row, combine, print_cpu, print_throughput
from storage.embedded import free_port

DB_NAME = "bench"
HOST = "127.0.0.1"
STORE_BODY = json.dumps({"title": "Benchmark post", "body": "Written by bench.run.", "views": 1,
                         "published": True}).encode()


def _graphql(query: str, variables: dict | None = None) -> bytes:
    return json.dumps({"query": query, "variables": variables or {}}).encode()


def _cases(post_id: str, token: str) -> list[Case]:
    """(name, method, path, body, headers, bare): bare is None when bare gets the same request, or
    the REST request doing the same database work (the GraphQL cases). A bearer token where the
    service needs a user to do the same work as bare: users are visible to logged-in users only,
    and storing needs an author."""
    bearer = {"Authorization": f"Bearer {token}"}
    index = ("GET", "/api/restify/posts?perPage=15", b"", {})
    uncounted = ("GET", "/api/restify/posts?perPage=15&count=none", b"", {})  # a GraphQL list shows no total
    show = ("GET", f"/api/restify/posts/{post_id}?related=comments,tags", b"", bearer)
    json_type = {"Content-Type": "application/json"}
    return [
        ("index", *index, None),
        ("index related=user,comments", "GET", "/api/restify/posts?perPage=15&related=user,comments", b"", bearer,
         None),
        ("show", "GET", f"/api/restify/posts/{post_id}", b"", bearer, None),
        ("show related=comments,tags", *show, None),
        ("graphql postList(first: 15)", "POST", "/graphql",
         _graphql("{ postList(first: 15) { id title body views published user_id created_at updated_at } }"),
         json_type, uncounted),
        ("graphql post{comments,tags}", "POST", "/graphql",
         _graphql("query($id: ID!) { post(id: $id) { id title comments { id body } tags { id name } } }",
                  {"id": post_id}), {**bearer, **json_type}, show),
        ("store", "POST", "/api/restify/posts", STORE_BODY, {**bearer, **json_type}, None),
    ]


Request = tuple[str, str, bytes, dict[str, str]]  # method, path, body, headers


def _eve_requests(post_id: str, token: str) -> dict[str, Request]:
    """Eve's nearest request for every case (it has no relations and no GraphQL): a page of 15 without
    a total (the service counts), the same page behind the token, a single post with a token (for the
    show with relations too), a store
    with a token. The GraphQL cases are measured against the REST request doing their work."""
    bearer = {"Authorization": f"Bearer {token}"}
    index = ("GET", "/posts", b"", {})
    show = ("GET", f"/posts/{post_id}", b"", bearer)
    return {"index": index, "index related=user,comments": ("GET", "/member_posts", b"", bearer),
            "show": show, "show related=comments,tags": show, "graphql postList(first: 15)": index,
            "graphql post{comments,tags}": show,
            "store": ("POST", "/posts", STORE_BODY, {**bearer, "Content-Type": "application/json"})}


@asynccontextmanager
async def core_app(uri: str, env: dict[str, str]) -> AsyncIterator[Any]:
    """The framework's core on the benchmark's database, for seeding (built inside the loop:
    Motor binds to it). Seeding commands are not requests: big insert batches get a minute."""
    from service.config import load_settings
    from service.console.runtime import build

    app = build(load_settings(ROOT, environ=env), uri, timeout_ms=60_000)
    try:
        yield app
    finally:
        app.db.close()


async def _seed(uri: str, env: dict[str, str]) -> tuple[str, str]:
    """Seeds through the core (the shapes the operations store); returns a post id and a token."""
    from bench.data import seed
    from service.core.operations.auth import create_token
    from storage import Filter

    async with core_app(uri, env) as app:
        await seed(app, users=100, posts=1000, comments=5000)
        user = await app.db.collection("users").find_one(Filter())
        comment = await app.db.collection("comments").find_one(Filter())
        return comment["post_id"], await create_token(app, user["id"], name="bench")


def _measure(server: Managed, db_pid: int, target: Target, connections: int, args: argparse.Namespace,
             workdir: Path) -> Measurement:
    if args.warmup > 0:
        run_load(target, connections, args.warmup, args.client, workdir)  # warm caches and connections
    server_before, db_before, machine_before = server.cpu(), total_cpu([db_pid]), machine_busy_seconds()
    result: LoadResult = run_load(target, connections, args.duration, args.client, workdir)
    server_after, db_after, machine_after = server.cpu(), total_cpu([db_pid]), machine_busy_seconds()
    server.check_alive()  # a server that died mid-run would pass for a slow one
    per_process = [server_after[pid] - server_before.get(pid, 0.0) for pid in server_after]
    db_cpu = db_after - db_before
    other = (machine_after - machine_before) - sum(per_process) - db_cpu - result.client_cpu_s
    return Measurement(result, per_process, db_cpu, max(0.0, other))


def _embedded_pid(server_uri: str) -> int:
    port = server_uri.rsplit(":", 1)[1]
    for pid in descendants(os.getpid()):
        line = command_line(pid)
        if "nx_27017" in line and f"--port {port}" in line:
            return pid
    raise RuntimeError("cannot find the embedded database process")


def add_load_arguments(parser: argparse.ArgumentParser, connections: str = "16,64", duration: float = 5.0,
                       rounds: int = 2) -> None:
    """The options every measuring command shares (this one and `bench.query`)."""
    parser.add_argument("--connections", default=connections,
                        help=f"comma list of connection counts (default {connections})")
    parser.add_argument("--duration", type=float, default=duration,
                        help=f"seconds measured per run (default {duration:g})")
    parser.add_argument("--rounds", type=int, default=rounds,
                        help=f"alternating service/bare runs per case, pooled (default {rounds})")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of unmeasured load before each run")
    parser.add_argument("--processes", type=int, default=1, help="processes for the service and for bare")
    parser.add_argument("--client", choices=("auto", "wrk", "python"), default="auto",
                        help="load generator: wrk when on PATH (auto), or the built-in asyncio client")
    parser.add_argument("--only", default="",
                        help="run only cases whose name contains this text (or one of several, split by '|')")


def check_load_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    args.connections = [int(c) for c in args.connections.split(",") if c.strip()]
    if args.client == "auto":
        args.client = "wrk" if wrk_available() else "python"
    if args.client == "wrk" and not wrk_available():
        parser.error("wrk is not on PATH; use --client python")
    if args.processes < 1 or args.rounds < 1 or not args.connections or min(args.connections) < 1:
        parser.error("--processes, --rounds and every --connections value must be at least 1")
    return args


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_arguments(parser)
    return check_load_arguments(parser, parser.parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    return in_workspace("restify-bench-", lambda workspace: _bench(workspace, args))


def _bench(workspace: Workspace, args: argparse.Namespace) -> int:
    print(f"temp dir {workspace.dir}; client {args.client}; {args.processes} process(es); "
          f"{args.rounds} x {args.duration:g} s per side and case; "
          f"load average before start {os.getloadavg()[0]:.2f}", flush=True)
    database = workspace.start_database()
    # The store case is one token writing as fast as the clients can: capacity, not the pace one user is
    # allowed (throttle.writes_per_minute), which would refuse it within a second.
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": DB_NAME,
           "RESTIFY_THROTTLE_WRITES_PER_MINUTE": "0"}
    print("seeding 100 users, 1,000 posts, 5,000 comments ...", flush=True)
    post_id, token = asyncio.run(_seed(database.uri, env))
    servers = start_servers(workspace, env, args, with_eve=True)
    cases = [c for c in _cases(post_id, token) if selected(c[0], args.only)]
    check_parity(HOST, servers.service_port, servers.bare_port, cases)
    eve = _eve_requests(post_id, token) if servers.eve is not None else {}
    for name, (method, path, body, headers) in eve.items():
        status, _ = fetch(HOST, servers.eve_port, method, path, body, headers)
        if status not in (200, 201):
            raise RuntimeError(f"{name}: Eve answered {status}; see {servers.eve.log if servers.eve else ''}")
    rows = measure_cases(cases, servers, args, workspace.dir, eve)
    print_throughput(rows, args)
    print_cpu(rows, args)
    return 0


def selected(name: str, only: str) -> bool:
    return any(part in name for part in only.split("|"))


@dataclass
class Servers:
    service: Managed
    bare: Managed
    service_port: int
    bare_port: int
    db_pid: int
    eve: Managed | None = None
    eve_port: int = 0


def eve_installed() -> bool:
    try:
        import eve  # noqa: F401
        import gunicorn  # noqa: F401
    except ImportError:
        return False
    return True


def start_servers(workspace: Workspace, env: dict[str, str], args: argparse.Namespace,
                  with_eve: bool = False) -> Servers:
    """`restify serve` and the bare app (and Eve, when asked and installed), all on the workspace's
    database, ready to answer."""
    assert workspace.database is not None
    service_port, bare_port = free_port(), free_port()
    service = workspace.serve(env, service_port, args.processes)
    bare = workspace.start("bare", [sys.executable, "-m", "bench.bare", "--uri", workspace.database.uri, "--db",
                                    DB_NAME, "--port", str(bare_port), "--processes", str(args.processes)], env)
    bare.wait_for("bare serving", count=args.processes)
    servers = Servers(service, bare, service_port, bare_port, _embedded_pid(workspace.database.uri))
    if with_eve and not eve_installed():
        print("Eve is not installed (pip install -e '.[bench]'): its columns are left out", flush=True)
    elif with_eve:
        servers.eve_port = free_port()
        # gthread workers, 8 threads each: Flask and PyMongo block, so a worker serves 8 requests at once.
        servers.eve = workspace.start("eve", [sys.executable, "-m", "gunicorn", "-k", "gthread", "-w",
                                              str(args.processes), "--threads", "8", "-b",
                                              f"{HOST}:{servers.eve_port}", "bench.eve_app:make_app()"],
                                      {**env, "EVE_MONGO_URI": workspace.database.uri, "EVE_DB": DB_NAME})
        servers.eve.wait_for("Booting worker", count=args.processes)
    return servers


def measure_cases(cases: list[Case], servers: Servers, args: argparse.Namespace, workdir: Path,
                  eve: dict[str, Request] | None = None) -> list[Row]:
    """Each case at each connection count: service, bare(, Eve), service, bare ... (`--rounds`), pooled."""
    rows: list[Row] = []
    for name, method, path, body, headers, bare_request in cases:
        requests = {"service": (method, path, headers, body)}
        b_method, b_path, b_body, b_headers = bare_request or (method, path, body, headers)
        requests["bare"] = (b_method, b_path, b_headers, b_body)
        sides = [("service", servers.service, servers.service_port), ("bare", servers.bare, servers.bare_port)]
        if eve and name in eve and servers.eve is not None:
            e_method, e_path, e_body, e_headers = eve[name]
            requests["eve"] = (e_method, e_path, e_headers, e_body)
            sides.append(("eve", servers.eve, servers.eve_port))
        for connections in args.connections:
            runs: dict[str, list[Measurement]] = {side: [] for side, _, _ in sides}
            # Alternating rounds, so a slow spell of the shared database hits every side alike.
            for _ in range(args.rounds):
                for side, server, port in sides:
                    target = Target(HOST, port, *requests[side])
                    runs[side].append(_measure(server, servers.db_pid, target, connections, args, workdir))
            peer = combine(runs["eve"]) if "eve" in runs else None
            rows.append((name, connections, combine(runs["service"]), combine(runs["bare"]), peer))
            print(f"  done: {name} x{connections}", flush=True)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
