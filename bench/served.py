"""Instructions a server executes per request, counted by valgrind: the service (`restify serve`, one
process) and the bare app answering the same request, so their ratio is the framework's own work
without the machine's noise (not all of what a request costs in time: see `--misses`).

    python -m bench.served [--requests 300] [--connections 1] [--only NAME] [--misses]

Each case starts its server under `valgrind --tool=cachegrind` twice, sends it a few keep-alive requests
and then `--requests` more (over `--connections` connections at once: a server with many requests in
flight does work a lone request does not), stops it with SIGTERM and takes the difference per request (start-up, warm-up
and shutdown cancel out; the timers a server runs while idle do not quite, which is why the count is
large). Every answer must be a 200 (201 for a store).

With `--misses`, valgrind also models the machine's caches (slower: minutes a case) and the table adds the
misses of the first-level instruction and data caches per request: two servers that execute as many
instructions may still spend different times on them, and what their code and data take of the caches
is where the difference shows.

  index            GET /api/restify/posts?perPage=15 (guest; counted: estimated_document_count)
  index uncounted  the same with count=none (what a GraphQL list reads)
  graphql list     POST /graphql { postList(first: 15) { ... } } (guest); bare answers the uncounted index
  show             GET /api/restify/posts/<id> with a bearer token
  graphql show     POST /graphql { post(id: <id>) { id title comments { id body } tags { id name } } } with
                   the token; bare answers GET /api/restify/posts/<id>?related=comments,tags
"""
import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from bench.instructions import CACHE_SIMULATED, VALGRIND, arguments, counts_in, seeded, under_valgrind
from bench.procs import ROOT, Workspace
from bench.run import DB_NAME, selected
from storage.embedded import free_port

WARM_UP = 30
_LIST = json.dumps({"query": "{ postList(first: 15) { id title body views published user_id created_at "
                             "updated_at } }"}).encode()
INDEX = "/api/restify/posts?perPage=15"
UNCOUNTED = INDEX + "&count=none"
Request = tuple[str, str, bytes, bool]  # method, path, body, with the token
INSTRUCTIONS = ("instructions",)
WITH_MISSES = ("instructions", "I1 misses", "D1 misses")


def _cases(post_id: str) -> dict[str, dict[str, Request]]:
    """Each case's request to the service and to bare."""
    show = ("GET", f"/api/restify/posts/{post_id}", b"", True)
    post = json.dumps({"query": "query($id: ID!) { post(id: $id) { id title comments { id body } tags { id name } } }",
                       "variables": {"id": post_id}}).encode()
    return {
        "index": {"service": ("GET", INDEX, b"", False), "bare": ("GET", INDEX, b"", False)},
        "index uncounted": {"service": ("GET", UNCOUNTED, b"", False), "bare": ("GET", UNCOUNTED, b"", False)},
        "graphql list": {"service": ("POST", "/graphql", _LIST, False), "bare": ("GET", UNCOUNTED, b"", False)},
        "show": {"service": show, "bare": show},
        "graphql show": {"service": ("POST", "/graphql", post, True),
                         "bare": ("GET", f"/api/restify/posts/{post_id}?related=comments,tags", b"", True)},
    }


def _command(side: str, uri: str, port: int) -> list[str]:
    if side == "service":
        return [sys.executable, "-m", "service.cli", "--app-dir", str(ROOT), "serve", "--port", str(port)]
    return [sys.executable, "-m", "bench.bare", "--uri", uri, "--db", DB_NAME, "--port", str(port)]


def _wait_listening(port: int, process: subprocess.Popen, log: str) -> None:
    deadline = time.monotonic() + 300  # start-up under valgrind is slow
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}; see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the server did not listen within 300 s; see {log}")


def _counted(side: str, request: Request, count: int, env: dict[str, str], token: str, workdir: str,
             connections: int = 1, counters: tuple[str, ...] = INSTRUCTIONS) -> dict[str, int]:
    """The `counters` of the server from start to stop (the instructions it executed; with WITH_MISSES its
    cache misses too), answering WARM_UP + `count` requests (`count` split evenly over `connections` at once)."""
    port = free_port()
    log = os.path.join(workdir, f"{side}-{count}.log")
    command = [*(VALGRIND if counters == INSTRUCTIONS else CACHE_SIMULATED), *_command(side, env["MONGODB_URI"], port)]
    with open(log, "wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_listening(port, process, log)
        method, path, body, with_token = request
        headers = {"Content-Type": "application/json"} if body else {}
        if with_token:
            headers["Authorization"] = f"Bearer {token}"
        failures: list[str] = []

        def send(times: int) -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            for _ in range(times):
                connection.request(method, path, body=body or None, headers=headers)
                answer = connection.getresponse()
                answer.read()
                if answer.status not in (200, 201):
                    failures.append(f"{side} {method} {path}: {answer.status}")
                    break
            connection.close()
        send(WARM_UP)
        clients = [threading.Thread(target=send, args=(count // connections,)) for _ in range(connections)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        if failures:
            raise RuntimeError(failures[0])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=300)
    with open(log, encoding="utf-8", errors="replace") as printed:
        found = counts_in(printed.read(), counters)
    if found is None:
        raise RuntimeError(f"valgrind printed no count; see {log}")
    return found


def _bench(workspace: Workspace, args: argparse.Namespace) -> int:
    env, post_id, token = seeded(workspace)
    counters = WITH_MISSES if args.misses else INSTRUCTIONS
    few = 20
    rows: list[tuple[str, dict[str, float], dict[str, float]]] = []
    for case, sides in _cases(post_id).items():
        if args.only is not None and not selected(case, args.only):
            continue
        per_request: dict[str, dict[str, float]] = {}
        for side, request in sides.items():
            many, some = few + args.requests, few
            more, fewer = (_counted(side, request, sent, env, token, str(workspace.dir), args.connections, counters)
                           for sent in (many, some))
            # Each connection sends its even share: what both runs sent, told apart.
            answered = (many // args.connections - some // args.connections) * args.connections
            per_request[side] = {name: (more[name] - fewer[name]) / answered for name in counters}
        rows.append((case, per_request["service"], per_request["bare"]))
        print(f"  done: {case}", flush=True)
    print(f"\nServer {', '.join(counters)} per request ({args.requests} requests counted over "
          f"{args.connections} connection(s), one process each), and bare ÷ service")
    print(f"{'':16}" + "".join(f" | {name + ' (k)':^25}" for name in counters))
    print(f"{'case':16}" + f" | {'service':>9} {'bare':>9} {'÷':>5}" * len(counters))
    for case, service, bare in rows:
        print(f"{case:16}" + "".join(f" | {service[name] / 1000:9,.0f} {bare[name] / 1000:9,.0f} "
                                     f"{bare[name] / service[name]:5.2f}" for name in counters))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = arguments("bench.served", __doc__, "requests", 300)
    parser.add_argument("--connections", type=int, default=1, help="connections sending at once (default 1)")
    parser.add_argument("--misses", action="store_true",
                        help="model the caches too: first-level instruction and data cache misses per request")
    args = parser.parse_args(argv)
    if args.connections < 1 or args.requests < args.connections:
        parser.error("--connections must be at least 1 and at most --requests")
    return under_valgrind("restify-served-", _bench, args)


if __name__ == "__main__":
    sys.exit(main())
