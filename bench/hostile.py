"""Hostile soak: plain reads measured while a bounded attack mix runs, next to the same reads without it.

    python -m bench.hostile [--seconds 15] [--readers 4] [--processes 1] [--flood]
                            [--mix all|first-round|surfaces] [--only REGEX] [--posts 5000]

Starts an embedded nx-27017 and `restify serve` (real argon2 cost) in a temp dir, seeds 100 users and
`--posts` posts, registers a user who writes 50 posts and an attacker (bench/surfaces.py), then runs two
phases of `--seconds` each:

1. quiet: `--readers` keep-alive clients read the posts index and single posts, back to back;
2. hostile: the same readers, while another process runs the attack mix, every part bounded in time,
   concurrency and rate. The first round's parts (`RATES`, about 137 attack requests a second in all,
   10 MB/s of GraphQL bodies): GraphQL fragment bombs (ten fragments, each spreading the next four
   times) and alias floods (a ~950 KB document of 60,000 aliases), login storms (wrong passwords for one
   account and for many), 50 slow clients (headers sent a byte a second), 300 half-open connections
   (never a byte), and oversized bodies (a declared and an undeclared 20 MB). The surfaces' parts
   (bench/surfaces.py): the 82-byte amplification request sent by 8 sockets that never read (and read
   once a second, with its GraphQL twin), two clients looping a relation search and sort, a
   140,000-value `in` filter through MCP every 3 s, and a bulk update racing deletes of its records.
   `--flood` sends the first round's parts as fast as their 49 clients can instead: that measures
   capacity under saturation, which pacing at a proxy must prevent.

It prints the p50, p99 and maximum latency of the plain reads in each phase, what the attacks got back
(status counts), and whether the targets hold: hostile p99 within 3x of quiet p99, no plain read slower
than 500 ms, no plain read failing, no 5xx to anyone, the service's processes under 512 MB together
(peak resident memory). Exit code 1 when a target fails.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.procs import Workspace, in_workspace
from bench.surfaces import Attacker, SurfaceAttacks, prepare_attacker, wanted
from bench.wire import HOST, Connection

P99_FACTOR = 3.0
MAX_PLAIN_MS = 500.0
MAX_RSS_MB = 512


# -- the plain reads that are measured ---------------------------------------------------------------------
@dataclass
class Reads:
    latencies_ms: list[float] = field(default_factory=list)
    failures: Counter = field(default_factory=Counter)

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


async def read_plainly(port: int, post_ids: list[str], seconds: float, readers: int) -> Reads:
    reads = Reads()
    deadline = time.monotonic() + seconds

    async def reader(index: int) -> None:
        connection = Connection(port)
        rng = random.Random(index)
        while time.monotonic() < deadline:
            path = "/api/restify/posts?perPage=15" if rng.random() < 0.5 \
                else f"/api/restify/posts/{rng.choice(post_ids)}"
            started = time.perf_counter()
            try:
                status, _ = await connection.request("GET", path)
            except Exception as error:  # noqa: BLE001 - a plain read that fails is a finding
                reads.failures[type(error).__name__] += 1
                continue
            reads.latencies_ms.append(1000 * (time.perf_counter() - started))
            if status != 200:
                reads.failures[status] += 1
            await asyncio.sleep(0.005)
        connection.close()

    await asyncio.gather(*(reader(i) for i in range(readers)))
    return reads


# -- the attack mix, run in its own process ----------------------------------------------------------------
def fragment_bomb(levels: int = 10, spreads: int = 4) -> str:
    fragments = ["fragment F0 on Post { id title }"]
    for level in range(1, levels):
        fragments.append(f"fragment F{level} on Post {{ {' '.join([f'...F{level - 1}'] * spreads)} }}")
    return f"query {{ postList {{ ...F{levels - 1} }} }}\n" + "\n".join(fragments)


def alias_flood(aliases: int = 60_000) -> str:
    """Short base-36 alias names keep 60,000 of them under the 1 MiB body limit (about 950 KB)."""
    return "query { " + " ".join(f"{_base36(i)}:__typename" for i in range(aliases)) + " }"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    name = ""
    while True:
        n, digit = divmod(n, 36)
        name = digits[digit] + name
        if n == 0:
            return "a" + name


# Requests per second of each paced part, all clients of the part together (`--flood` drops the pacing).
RATES = {"graphql fragment bomb": 20, "graphql alias flood": 10, "login storm, one account": 50,
         "login storm, many accounts": 50, "oversized body, declared": 5, "oversized body, chunked": 2}


class Attacks:
    """Each part runs until the deadline with bounded concurrency and, unless flooding, a bounded rate
    (`RATES`); statuses are counted per part."""

    def __init__(self, port: int, email: str, deadline: float, flood: bool = False,
                 only: "re.Pattern[str] | None" = None) -> None:
        self.port = port
        self.only = only
        self.email = email
        self.deadline = deadline
        self.flood = flood
        self.statuses: dict[str, Counter] = {}
        self.bomb = json.dumps({"query": fragment_bomb()}).encode()
        self.aliases = json.dumps({"query": alias_flood()}).encode()

    def _count(self, part: str, status: object) -> None:
        self.statuses.setdefault(part, Counter())[status] += 1

    async def _paced(self, part: str, clients: int, send: Callable[[Connection, int], Awaitable[object]]) -> None:
        """`clients` loops calling `send(connection, n)`, each at RATES[part] / clients a second."""
        if not wanted(self.only, part):
            return
        interval = 0.0 if self.flood else clients / RATES[part]

        async def client(index: int) -> None:
            connection = Connection(self.port)
            n, due = index, time.monotonic() + interval * index / clients
            while time.monotonic() < self.deadline:
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                due += interval
                try:
                    self._count(part, await send(connection, n))
                except Exception as error:  # noqa: BLE001 - closed or timed out: counted, then reconnect
                    self._count(part, type(error).__name__)
                    connection.close()
                n += clients
            connection.close()
        await asyncio.gather(*(client(i) for i in range(clients)))

    def _posting(self, path: str,
                 body: bytes | Callable[[int], bytes]) -> Callable[[Connection, int], Awaitable[object]]:
        async def send(connection: Connection, n: int) -> object:
            payload = body(n) if callable(body) else body
            status, _ = await connection.request("POST", path, payload, {"Content-Type": "application/json"},
                                                 timeout=60)
            return status
        return send

    def graphql(self) -> list:
        return [self._paced("graphql fragment bomb", 2, self._posting("/graphql", self.bomb)),
                self._paced("graphql alias flood", 4, self._posting("/graphql", self.aliases))]

    def logins(self) -> list:
        wrong = json.dumps({"email": self.email, "password": "not-the-password"}).encode()

        def anyone(n: int) -> bytes:
            return json.dumps({"email": f"nobody{n}@example.com", "password": "guess"}).encode()
        return [self._paced("login storm, one account", 20, self._posting("/api/login", wrong)),
                self._paced("login storm, many accounts", 20, self._posting("/api/login", anyone))]

    async def _held(self, part: str, count: int, hold: Callable[..., Awaitable[str]]) -> None:
        """`count` connections, each kept by `hold(reader, writer)` until it says how it ended."""
        if not wanted(self.only, part):
            return
        async def one() -> None:
            try:
                reader, writer = await asyncio.open_connection(HOST, self.port)
            except OSError as error:
                self._count(part, type(error).__name__)
                return
            try:
                self._count(part, await hold(reader, writer))
            except (ConnectionError, OSError):
                self._count(part, "closed by the server")
            finally:
                writer.close()
        await asyncio.gather(*(one() for _ in range(count)))

    async def slow_clients(self, count: int = 50) -> None:
        """Headers a byte at a time, one byte a second: the server should give up on them."""
        async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str:
            request = f"GET /api/restify/posts HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: ".encode() + b"a" * 200
            for byte in request:
                if time.monotonic() > self.deadline:
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(1.0)
            return "held to the end"
        await self._held("slow headers", count, hold)

    async def half_open(self, count: int = 300) -> None:
        """Connections that never send a byte."""
        async def hold(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> str:
            try:
                data = await asyncio.wait_for(reader.read(1), max(0.0, self.deadline - time.monotonic()))
            except asyncio.TimeoutError:
                return "held to the end"
            return "answered" if data else "closed by the server"
        await self._held("half-open", count, hold)

    def oversized(self) -> list:
        big = b"{" + b" " * (20 * 1024 * 1024) + b"}"

        async def undeclared(_connection: Connection, _n: int) -> object:
            # A chunked body with no Content-Length: refused while it streams in.
            reader, writer = await asyncio.open_connection(HOST, self.port)
            try:
                writer.write(f"POST /api/restify/posts HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: "
                             "application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
                chunk = b" " * 65536
                for _ in range(320):
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                status_line = await asyncio.wait_for(reader.readline(), 30)
                return int(status_line.split()[1]) if status_line else "closed"
            finally:
                writer.close()
        return [self._paced("oversized body, declared", 1, self._posting("/api/restify/posts", big)),
                self._paced("oversized body, chunked", 1, undeclared)]

    async def run(self) -> dict[str, dict]:
        parts = self.graphql() + self.logins() + self.oversized() + [self.slow_clients(), self.half_open()]
        await asyncio.gather(*parts)
        return {part: dict(counts) for part, counts in self.statuses.items()}


def _attack_process(port: int, email: str, attacker: Attacker | None, seconds: float, flood: bool, mix: str,
                    only: str | None, results: "multiprocessing.Queue") -> None:
    async def main() -> dict[str, dict]:
        deadline = time.monotonic() + seconds
        pattern = re.compile(only) if only else None
        parts = []
        if mix in ("all", "first-round"):
            parts.append(Attacks(port, email, deadline, flood, pattern).run())
        if attacker is not None:
            parts.append(SurfaceAttacks(port, attacker, deadline, pattern).run())
        found: dict[str, dict] = {}
        for statuses in await asyncio.gather(*parts):
            found.update(statuses)
        return found
    results.put(asyncio.run(main()))


class MemoryWatch:
    """The peak resident memory of the service's processes together, sampled four times a second."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _rss_mb(self) -> float:
        total = 0
        for pid in self.pids:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        return total / 1024

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            self.peak_mb = max(self.peak_mb, self._rss_mb())

    def __enter__(self) -> "MemoryWatch":
        self.peak_mb = self._rss_mb()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# -- the command -------------------------------------------------------------------------------------------
async def _prepare(port: int) -> tuple[str, list[str]]:
    """Registers a user and writes 50 posts; returns the user's email and the post ids."""
    connection = Connection(port)
    email = "victim@example.com"
    json_type = {"Content-Type": "application/json"}
    body = json.dumps({"name": "Victim", "email": email, "password": "correct-horse",
                       "password_confirmation": "correct-horse"}).encode()
    status, raw = await connection.request("POST", "/api/register", body, json_type)
    if status != 201:
        raise RuntimeError(f"register answered {status}: {raw[:200]!r}")
    token = json.loads(raw)["meta"]["token"]
    ids = []
    for n in range(50):
        post = json.dumps({"title": f"Post {n}", "body": "text " * 40, "published": True}).encode()
        status, raw = await connection.request("POST", "/api/restify/posts", post,
                                               {**json_type, "Authorization": f"Bearer {token}"})
        if status != 201:
            raise RuntimeError(f"store answered {status}: {raw[:200]!r}")
        ids.append(json.loads(raw)["data"]["id"])
    connection.close()
    return email, ids


async def _seed(uri: str, env: dict[str, str], posts: int) -> None:
    """100 users and `posts` posts by them, written directly (the relation queries' data)."""
    from bench.data import seed, seed_many_posts
    from bench.run import core_app

    async with core_app(uri, env) as app:
        await seed(app, users=100, posts=0, comments=0)
        await seed_many_posts(app, posts)


def _line(name: str, reads: Reads) -> str:
    return (f"{name:<10}{len(reads.latencies_ms):>8}{reads.percentile(50):>10.1f}{reads.percentile(99):>10.1f}"
            f"{max(reads.latencies_ms, default=float('nan')):>10.1f}   failures {dict(reads.failures) or 0}")


def _verdict(quiet: Reads, hostile: Reads, attacks: dict[str, dict], peak_mb: float) -> list[tuple[str, bool]]:
    server_errors = sum(n for counts in attacks.values() for status, n in counts.items()
                        if isinstance(status, int) and status >= 500)
    return [
        (f"hostile p99 within {P99_FACTOR:g}x of quiet p99 "
         f"({hostile.percentile(99):.1f} vs {quiet.percentile(99):.1f} ms)",
         hostile.percentile(99) <= P99_FACTOR * max(quiet.percentile(99), 1.0)),
        (f"no plain read slower than {MAX_PLAIN_MS:g} ms (slowest {max(hostile.latencies_ms, default=0):.1f} ms)",
         max(hostile.latencies_ms, default=0) <= MAX_PLAIN_MS),
        ("no plain read failed", not quiet.failures and not hostile.failures),
        (f"no 5xx to the attacks ({server_errors})", server_errors == 0),
        (f"server memory under {MAX_RSS_MB} MB (peak {peak_mb:.0f} MB)", peak_mb < MAX_RSS_MB),
    ]


def _run(workspace: Workspace, args: argparse.Namespace) -> int:
    from storage.embedded import free_port

    database = workspace.start_database()
    port = free_port()
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": "hostile",
           "RESTIFY_FILES_ROOT": str(workspace.dir / "storage")}
    if args.mix != "first-round":
        asyncio.run(_seed(database.uri, env, args.posts))
    service = workspace.serve(env, port, args.processes)
    print(f"temp dir {workspace.dir}; service on {HOST}:{port} ({args.processes} process(es)); "
          f"database {database.uri}", flush=True)
    email, ids = asyncio.run(_prepare(port))
    attacker = asyncio.run(prepare_attacker(port)) if args.mix != "first-round" else None
    quiet = asyncio.run(read_plainly(port, ids, args.seconds, args.readers))
    results: multiprocessing.Queue = multiprocessing.Queue()
    attacking = multiprocessing.get_context("fork").Process(
        target=_attack_process, args=(port, email, attacker, args.seconds, args.flood, args.mix, args.only, results),
        daemon=True)
    with MemoryWatch(service.pids) as memory:
        attacking.start()
        time.sleep(0.5)  # the attacks are under way before the reads are measured
        hostile = asyncio.run(read_plainly(port, ids, args.seconds, args.readers))
        attacks = results.get(timeout=args.seconds + 120)
        attacking.join(timeout=30)
    service.check_alive()

    print(f"\n{'phase':<10}{'reads':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    print(_line("quiet", quiet))
    print(_line("hostile", hostile))
    print("\nattacks (what they got back):")
    for part, counts in sorted(attacks.items()):
        print(f"  {part:<30}{sum(counts.values()):>6}  {dict(sorted(counts.items(), key=str))}")
    print("\ntargets:")
    verdict = _verdict(quiet, hostile, attacks, memory.peak_mb)
    for text, ok in verdict:
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")
    return 0 if all(ok for _, ok in verdict) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each phase (default 15)")
    parser.add_argument("--readers", type=int, default=4, help="concurrent plain readers (default 4)")
    parser.add_argument("--processes", type=int, default=1, help="`restify serve --processes` (default 1)")
    parser.add_argument("--flood", action="store_true",
                        help="send the attacks as fast as their clients can instead of at the bounded RATES")
    parser.add_argument("--mix", choices=("all", "first-round", "surfaces"), default="all",
                        help="the first round's attacks, the query/bulk surfaces' (bench/surfaces.py), or both")
    parser.add_argument("--only", metavar="REGEX",
                        help="only the attack parts whose name matches (as printed), to find what costs most")
    parser.add_argument("--posts", type=int, default=5000,
                        help="posts by 100 seeded users, for the relation queries (default 5,000)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.readers < 1 or args.processes < 1:
        parser.error("--seconds, --readers and --processes must be positive")
    return in_workspace("restify-hostile-", lambda workspace: _run(workspace, args))


if __name__ == "__main__":
    raise SystemExit(main())
