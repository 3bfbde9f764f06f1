"""Slow readers: the server's memory while clients ask for a large answer and never read it.

    python -m bench.slow_readers [--clients 8] [--posts 200] [--body-kib 60] [--hold 36] [--waves 3]
                                 [--stagger 0]

Starts an embedded nx-27017 and `restify serve` (one process) in a temp dir and stores `--posts` posts
whose bodies are `--body-kib` KiB of text: one index page of all of them (the page cap is lifted to
`--posts`) is the large answer, about posts x body. It reads that answer once normally, then opens
`--clients` connections that each send `GET /api/restify/posts?perPage=<posts>` and never read a byte
(a small receive buffer, so the kernel takes almost nothing of the answer for them), `--stagger` seconds
apart. For `--hold` seconds (a little over `server.write_timeout`) it samples the server's resident
memory and times `/healthz` and a small GET; `--waves` repeats that with as many new clients, the
earlier ones still connected. In the end it reads what reached each client: its status line, its
bytes, and whether the server had closed it.
Extra environment for the server (`RESTIFY_SERVER_WRITE_TIMEOUT=5`, ...) passes through.

A measurement, not a test: nothing is asserted, the exit code is 0 when the run completes.
"""
import argparse
import asyncio
import os
import socket
import time
from collections import Counter
from dataclasses import dataclass, field

from bench.procs import Workspace, in_workspace

HOST = "127.0.0.1"
SMALL = "/api/restify/tags"  # an empty page: a few hundred bytes
RECEIVE_BUFFER = 4096  # the non-reading clients' SO_RCVBUF: the kernel holds almost nothing for them


def rss_mib(pid: int) -> tuple[float, float]:
    """The process's resident memory now and its peak so far (VmRSS, VmHWM), in MiB."""
    values = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def get(port: int, path: str, timeout: float = 120.0) -> tuple[int, bytes, float]:
    """One GET on a fresh connection, read whole: status, body, seconds."""
    started = time.monotonic()
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), body, time.monotonic() - started


def non_reader(port: int, path: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)  # before connect: fixes the window
    sock.connect((HOST, port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
    return sock


def outcome(sock: socket.socket) -> tuple[str, int, bool]:
    """Reads what reached a non-reading client: its status line, the bytes, whether the server closed it."""
    sock.settimeout(2.0)
    received = bytearray()
    closed = False
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                closed = True
                break
            received += chunk
    except ConnectionResetError:
        closed = True
    except OSError:  # timeout: the server still holds the connection open
        pass
    status = bytes(received.partition(b"\r\n")[0]).decode("latin-1") or "(nothing)"
    return status, len(received), closed


async def _seed(uri: str, name: str, posts: int, body_kib: int) -> None:
    from service.core.operations.crud import now
    from storage import connect

    db = connect(uri, name)
    stamp = {"created_at": now(), "updated_at": now()}
    body = ("lorem ipsum dolor sit amet " * (body_kib * 1024 // 27 + 1))[:body_kib * 1024]
    batch = []
    for n in range(posts):
        batch.append({"title": f"Post {n}", "body": body, "views": n, "published": True,
                      "user_id": None, "cover": None, "tag_ids": [], **stamp})
        if len(batch) == 50:
            await db.collection("posts").insert_many(batch)
            batch = []
    if batch:
        await db.collection("posts").insert_many(batch)
    db.close()


@dataclass
class Sampled:
    rss: list[float] = field(default_factory=list)
    slowest_health: float = 0.0
    slowest_small: float = 0.0
    failures: Counter = field(default_factory=Counter)


def sample(port: int, pid: int, seconds: float, into: Sampled) -> None:
    """Every ~0.5 s: the server's RSS, then a /healthz and a small GET, timed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        into.rss.append(rss_mib(pid)[0])
        for path in ("/healthz", SMALL):
            status, _, seconds_taken = get(port, path)
            if path == SMALL:
                into.slowest_small = max(into.slowest_small, seconds_taken)
            else:
                into.slowest_health = max(into.slowest_health, seconds_taken)
            if status != 200:
                into.failures[f"{path} {status}"] += 1
        time.sleep(0.5)


def _run(workspace: Workspace, args: argparse.Namespace) -> int:
    from storage.embedded import free_port

    database = workspace.start_database()
    port = free_port()
    name = "slow_readers"
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": name,
           "RESTIFY_FILES_ROOT": str(workspace.dir / "storage"),
           "RESTIFY_PAGINATION_MAX_PER_PAGE": str(args.posts)}  # the demo caps pages at 100
    asyncio.run(_seed(database.uri, name, args.posts, args.body_kib))
    service = workspace.serve(env, port, 1)
    pid = service.process.pid
    big = f"/api/restify/posts?perPage={args.posts}"
    get(port, SMALL)
    before = rss_mib(pid)[0]
    status, body, seconds = get(port, big)
    print(f"large answer: {status}, {len(body) / 2**20:.1f} MiB, read normally in {seconds:.2f} s; "
          f"server RSS {before:.0f} MiB before it, {rss_mib(pid)[0]:.0f} MiB after")
    waves: list[list[socket.socket]] = []
    for wave in range(args.waves):
        clients = []
        for _ in range(args.clients):
            clients.append(non_reader(port, big))
            time.sleep(args.stagger)
        waves.append(clients)
        sampled = Sampled()
        sample(port, pid, args.hold, sampled)
        print(f"wave {wave + 1}: {args.clients} more clients sent GET {big} and read nothing; server RSS (MiB) "
              f"every ~0.5 s for {args.hold:g} s:")
        print("  " + " ".join(f"{value:.0f}" for value in sampled.rss))
        print(f"  peak {max(sampled.rss):.0f} MiB, last {sampled.rss[-1]:.0f} MiB; slowest /healthz "
              f"{sampled.slowest_health * 1000:.0f} ms, slowest small GET {sampled.slowest_small * 1000:.0f} ms"
              + (f"; not 200: {dict(sampled.failures)}" if sampled.failures else ""))
    print(f"server RSS {before:.0f} MiB before; VmHWM {rss_mib(pid)[1]:.0f} MiB (the process's peak)")
    for wave, clients in enumerate(waves):
        outcomes = []
        for sock in clients:
            outcomes.append(outcome(sock))
            sock.close()
        statuses = Counter(status for status, _, _ in outcomes)
        closed = sum(1 for _, _, was_closed in outcomes if was_closed)
        reached = sum(received for _, received, _ in outcomes) / len(outcomes) / 2**20
        print(f"wave {wave + 1} in the end: {dict(statuses)}; closed by the server: {closed} of {len(outcomes)}; "
              f"{reached:.2f} MiB reached each on average (read at the end)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--body-kib", type=int, default=60)
    parser.add_argument("--hold", type=float, default=36.0, help="seconds to sample after each wave of clients")
    parser.add_argument("--waves", type=int, default=3, help="waves of clients, --hold seconds apart")
    parser.add_argument("--stagger", type=float, default=0.0,
                        help="seconds between two clients' requests (0: all at once, so their answers are built "
                             "side by side)")
    args = parser.parse_args()
    return in_workspace("restify-slow-readers-", lambda workspace: _run(workspace, args))


if __name__ == "__main__":
    raise SystemExit(main())
