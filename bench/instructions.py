"""Instructions per call of the common read path, counted by valgrind: figures that do not move with
the machine's load, for comparing two versions of the code.

    python -m bench.instructions [--calls 200] [--only NAME]

Starts an embedded nx-27017 in a temp dir, seeds it as `bench.run` does, then runs each case in a child
process under `valgrind --tool=cachegrind` twice, with a few calls and with `--calls` more, and prints the
difference per call (start-up and warm-up cancel out), with each case's ratio to the find alone:

  motor find        the page's find through Motor alone (what bare sends for a page of 15, and one more)
  index operation   the REST index without a total (`crud.index`, `perPage=15&count=none`, a guest), with
                    the REST door's budget (the door measures the page as it encodes it)
  graphql list      `{ postList(first: 15) { id title body views published user_id created_at updated_at } }`
                    through the GraphQL endpoint (parsed once, then served from its cache), measured as
                    the HTTP door measures it

The counts include the driver's threads. Wall-clock benchmarks (`bench.run`) say what a user sees; this
says whether a change made the framework's own work smaller, which on a shared machine a timed run can
only say for changes of tens of percent. Needs valgrind (`apt-get install valgrind`).
"""
import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from bench.procs import ROOT, Workspace, in_workspace
from bench.run import DB_NAME, _seed, selected

CASES = ("motor find", "index operation", "graphql list")
QUERY = "{ postList(first: 15) { id title body views published user_id created_at updated_at } }"
WARM_UP = 30
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
# The same count with valgrind's model of the machine's caches: the misses of the first-level caches too.
CACHE_SIMULATED = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null"]
# What valgrind's summary says, by the name a table gives it. "D1 misses" are the data cache's misses on
# reads and writes together.
COUNTERS = {"instructions": re.compile(r"I\s+refs:\s+([\d,]+)"),
            "I1 misses": re.compile(r"I1\s+misses:\s+([\d,]+)"),
            "D1 misses": re.compile(r"D1\s+misses:\s+([\d,]+)")}


def counts_in(output: str, names: tuple[str, ...]) -> dict[str, int] | None:
    """The counters `names` (of COUNTERS) valgrind printed in `output`; None when one is missing."""
    counts = {}
    for name in names:
        found = COUNTERS[name].search(output)
        if found is None:
            return None
        counts[name] = int(found.group(1).replace(",", ""))
    return counts


def under_valgrind(prefix: str, bench: Callable[[Workspace, argparse.Namespace], int],
                   args: argparse.Namespace) -> int:
    """`bench` in a fresh workspace, once valgrind is known to be there."""
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: apt-get install valgrind", file=sys.stderr)
        return 2
    return in_workspace(prefix, lambda workspace: bench(workspace, args))


async def _child(case: str, calls: int) -> None:
    """Runs `case` WARM_UP + `calls` times in this process (the one valgrind counts)."""
    from motor.motor_asyncio import AsyncIOMotorClient

    from service.config import load_settings
    from service.console.runtime import build
    from service.core.declarations import Budget
    from service.core.declarations.context import Context
    from service.core.operations import crud
    from service.graphql.service import GraphQLService

    uri = os.environ["MONGODB_URI"]
    app = build(load_settings(ROOT), uri)
    endpoint = GraphQLService(app).endpoint

    def context(door: str, params: dict[str, str]) -> Context:
        made = Context(user=None, door=door, params=dict(params), base_url="http://bench",
                       extras={"url": "http://bench/api/restify/posts", "address": "127.0.0.1", "repeated": {}})
        if door == "rest":  # the REST door's budget: the door measures the page it encodes
            made.budget = Budget(app.settings.max_response_bytes, door_measures=True)
        return made

    posts = AsyncIOMotorClient(uri, tz_aware=True)[DB_NAME].posts
    runs: dict[str, Callable[[], Awaitable[Any]]] = {
        "motor find": lambda: posts.find({}).sort("_id", 1).limit(16).to_list(None),
        "index operation": lambda: crud.index(app, "posts", context("rest", {"perPage": "15", "count": "none"})),
        "graphql list": lambda: endpoint.run(QUERY, {}, None, context("graphql", {}), measured=True),
    }
    run = runs[case]
    answer = await run()
    if case != "motor find" and "errors" in answer:
        raise RuntimeError(f"{case}: {answer['errors']}")
    for _ in range(WARM_UP + calls):
        await run()


def _counted(case: str, calls: int, env: dict[str, str]) -> int:
    """The instructions a child running `case` `calls` times executed, start-up included."""
    command = [*VALGRIND, sys.executable, "-m", "bench.instructions", "--child", case, "--calls", str(calls)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    found = counts_in(done.stderr, ("instructions",))
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{case}: valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return found["instructions"]


def seeded(workspace: Workspace) -> tuple[dict[str, str], str, str]:
    """The environment of the workspace's database, seeded as `bench.run` seeds it; a post id and a token."""
    database = workspace.start_database()
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": DB_NAME}
    print("seeding 100 users, 1,000 posts, 5,000 comments ...", flush=True)
    post_id, token = asyncio.run(_seed(database.uri, env))
    return env, post_id, token


def _bench(workspace: Workspace, args: argparse.Namespace) -> int:
    env = seeded(workspace)[0]
    few = 20
    per_call: dict[str, float] = {}
    for case in (c for c in CASES if args.only is None or selected(c, args.only)):
        extra = _counted(case, few + args.calls, env) - _counted(case, few, env)
        per_call[case] = extra / args.calls
        print(f"  done: {case}", flush=True)
    base = per_call.get("motor find")
    print(f"\nInstructions per call ({args.calls} calls counted, the driver's threads included)")
    print(f"{'case':18} {'k instructions':>15} {'÷ motor find':>13}")
    for case, count in per_call.items():
        ratio = f"{count / base:.2f}" if base else "-"
        print(f"{case:18} {count / 1000:15,.0f} {ratio:>13}")
    return 0


def arguments(module: str, doc: str, counted: str, default: int) -> argparse.ArgumentParser:
    """The options of a count: `--<counted>` (how many are counted per case) and `--only`."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    parser.add_argument(f"--{counted}", type=int, default=default,
                        help=f"{counted} counted per case (default {default})")
    parser.add_argument("--only", help="run only the cases whose names contain one of these ('|' separates)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments("bench.instructions", __doc__, "calls", 200)
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        asyncio.run(_child(args.child, args.calls))
        return 0
    return under_valgrind("restify-instructions-", _bench, args)


if __name__ == "__main__":
    sys.exit(main())
