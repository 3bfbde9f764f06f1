"""Live changes under load: N SSE subscribers and M GraphQL subscribers on one `restify serve`
process while writes run at a steady rate.

    python -m bench.live                               # 1,000 SSE + 200 GraphQL, 10 writes/s for 10 s
    python -m bench.live --sse 100 --graphql 20 --rate 5 --duration 5    # a quick look

Reports the delay from a write's acknowledgement (the 201 reaching the writer) to its delivery
to each subscriber (p50, p99, max), the server's memory per subscriber (RSS before and after they
connect), and the write throughput of closed-loop writers without and with the subscribers (and
whether every write of that burst reached every subscriber). The subscribers run in a process of their
own (raw sockets read by one epoll loop, bench/live_subscribers.py; `--clients N` spreads them over N),
and times come from the monotonic clock, which all processes share. The CPU the server, the writers and
the subscribers' side used is printed beside the figures: on a small machine what the load generator
takes, the server does not get. A measurement, not a test.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import sys
import time
from multiprocessing.connection import Connection

import httpx

from bench.live_subscribers import Deliveries, listen
from bench.load import _percentile
from bench.procs import Workspace, cpu_seconds, in_workspace, total_cpu
from storage.embedded import free_port

HOST = "127.0.0.1"
PREFIX = "/api/restify"


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))


async def _register(client: httpx.AsyncClient, number: int) -> str:
    password = "secret-pass"
    response = await client.post("/api/register", json={
        "name": f"Live {number}", "email": f"live{number}@example.com", "password": password,
        "password_confirmation": password})
    response.raise_for_status()
    return response.json()["meta"]["token"]


async def _write(client: httpx.AsyncClient, token: str, title: str) -> str:
    response = await client.post(f"{PREFIX}/posts", json={"title": title},
                                 headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()["data"]["id"]


async def _closed_loop(port: int, token: str, writers: int, seconds: float) -> tuple[float, int]:
    """Writes per second that `writers` back-to-back writers reach, and how many they made; each writer
    on a keep-alive connection of its own, written and read here: an HTTP client library would take a
    good part of a core beside the server it measures."""
    stop_at = time.monotonic() + seconds
    done = [0]

    async def writer(number: int) -> None:
        reader, stream = await asyncio.open_connection(HOST, port)
        body = json.dumps({"title": f"burst {number}"}).encode()
        request = (f"POST {PREFIX}/posts HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {token}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        try:
            while time.monotonic() < stop_at:
                stream.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 201 "):
                    raise RuntimeError(f"a write was refused: {head[:200]!r}")
                length = re.search(rb"\r\ncontent-length: *(\d+)", head, re.IGNORECASE)
                if length is None:
                    raise RuntimeError(f"a write's answer has no Content-Length: {head[:200]!r}")
                await reader.readexactly(int(length.group(1)))
                done[0] += 1
        finally:
            stream.close()
    started = time.monotonic()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    return done[0] / (time.monotonic() - started), done[0]


async def _steady(client: httpx.AsyncClient, token: str, rate: float, seconds: float,
                  deliveries: Deliveries) -> None:
    """One write every 1/rate seconds, each on its own task, so a slow answer does not slow the pace."""
    interval, pending = 1.0 / rate, []
    start = time.monotonic()

    async def one(number: int) -> None:
        post_id = await _write(client, token, f"steady {number}")
        deliveries.acked[post_id] = time.monotonic()
    for number in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, start + number * interval - time.monotonic()))
        pending.append(asyncio.create_task(one(number)))
    await asyncio.gather(*pending)


def _delays(deliveries: Deliveries, kind: str) -> tuple[list[float], int]:
    delays, missing = [], 0
    for post_id, acked in deliveries.acked.items():
        times = [t for k, t in deliveries.received.get(post_id, []) if k == kind]
        delays.extend((t - acked) * 1000 for t in times)
        missing += 0 if times else 1
    return sorted(delays), missing


def _line(name: str, delays: list[float], expected: int) -> str:
    if not delays:
        return f"  {name:<8} no deliveries"
    return (f"  {name:<8} {len(delays):>7} of {expected:>7} delivered   p50 {_percentile(delays, 0.5):7.1f} ms   "
            f"p99 {_percentile(delays, 0.99):7.1f} ms   max {delays[-1]:7.1f} ms")


class _Subscribers:
    """The subscribers, spread over `--clients` processes (subscriber n in process n mod clients),
    and asked together."""

    def __init__(self, port: int, tokens: list[str], args: argparse.Namespace) -> None:
        self.pipes: list[Connection] = []
        self.processes: list[multiprocessing.Process] = []
        clients = max(1, args.clients)
        for number in range(clients):
            ours, theirs = multiprocessing.Pipe()
            sse = [tokens[n % len(tokens)] for n in range(number, args.sse, clients)]
            graphql = [tokens[n % len(tokens)] for n in range(number, args.graphql, clients)]
            self.pipes.append(ours)
            self.processes.append(multiprocessing.Process(target=listen,
                                                          args=(port, sse, graphql, theirs)))

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes if process.pid is not None]

    def start(self, timeout: float) -> None:
        for process in self.processes:
            process.start()
        for pipe in self.pipes:
            if not pipe.poll(timeout):
                raise RuntimeError(f"the subscribers did not connect within {timeout:g} s")
            pipe.recv()

    def ask(self, command: str, argument: object = None) -> list:
        for pipe in self.pipes:
            pipe.send((command, argument))
        return [pipe.recv() for pipe in self.pipes]

    def report(self) -> dict[str, list[tuple[str, float]]]:
        merged: dict[str, list[tuple[str, float]]] = {}
        for received in self.ask("report"):
            for post_id, times in received.items():
                merged.setdefault(post_id, []).extend(times)
        return merged

    def stop(self) -> None:
        for pipe in self.pipes:
            pipe.send(("stop", None))
        for process in self.processes:
            process.join(30)
            if process.is_alive():
                process.kill()


async def _until(question, target: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while await asyncio.to_thread(question) < target:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def _throughput(port: int, token: str, args: argparse.Namespace, server_pid: int,
                      client_pids: list[int] = []) -> tuple[float, float, float, float, int]:  # noqa: B006 - never changed
    """(writes per second, server CPU ms per write, the subscribers' processes' share of a core, the
    writers' share of a core, writes made) of closed-loop writers."""
    before, clients_before, started = cpu_seconds(server_pid), total_cpu(client_pids), time.monotonic()
    own_before = time.process_time()
    rate, made = await _closed_loop(port, token, args.writers, args.burst)
    seconds = time.monotonic() - started
    cpu = cpu_seconds(server_pid) - before
    clients = (total_cpu(client_pids) - clients_before) / seconds
    return rate, cpu * 1000 / max(1, made), clients, (time.process_time() - own_before) / seconds, made


async def _register_all(port: int, users: int) -> list[str]:
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=60) as client:
        tokens = [await _register(client, n) for n in range(users)]
        await _write(client, tokens[0], "warm-up")
        return tokens


async def _deliveries(port: int, token: str, subscribers: _Subscribers, total: int, args: argparse.Namespace,
                      server_pid: int) -> tuple[Deliveries, float, str]:
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=60) as client:
        # A probe write that every subscriber must receive: then every subscription is live.
        probe = await _write(client, token, "probe")
        if not await _until(lambda: sum(subscribers.ask("count", probe)), total, 60):
            raise RuntimeError("not every subscriber went live")
        await asyncio.sleep(1.0)
        rss = _rss_kib(server_pid)
        subscribers.ask("clear")
        client_pids = subscribers.pids
        deliveries = Deliveries()
        started, server_cpu, client_cpu = time.monotonic(), cpu_seconds(server_pid), total_cpu(client_pids)
        await _steady(client, token, args.rate, args.duration, deliveries)
        await _until(lambda: sum(subscribers.ask("total")), len(deliveries.acked) * total, 30)
        seconds = time.monotonic() - started
        busy = (f"server {(cpu_seconds(server_pid) - server_cpu) / seconds:.0%} of a core, subscribers' "
                f"process{'es' if len(client_pids) > 1 else ''} {(total_cpu(client_pids) - client_cpu) / seconds:.0%}")
        deliveries.received = subscribers.report()
        return deliveries, rss, busy


def _run(port: int, server_pid: int, args: argparse.Namespace) -> None:
    tokens = asyncio.run(_register_all(port, args.users))
    without, cpu_without, _, writers_without, _ = asyncio.run(_throughput(port, tokens[0], args, server_pid))
    rss_before = _rss_kib(server_pid)
    total = args.sse + args.graphql
    subscribers = _Subscribers(port, tokens, args)
    started = time.monotonic()
    try:
        subscribers.start(180)
        connect_seconds = time.monotonic() - started
        deliveries, rss_after, busy = asyncio.run(_deliveries(port, tokens[0], subscribers, total, args, server_pid))
        subscribers.ask("clear")
        with_subscribers, cpu_with, clients_busy, writers_with, made = asyncio.run(
            _throughput(port, tokens[0], args, server_pid, subscribers.pids))
        # The throughput counts only if every write still reached every subscriber.
        asyncio.run(_until(lambda: sum(subscribers.ask("total")), made * total, 60))
        burst_delivered = sum(subscribers.ask("total"))
    finally:
        subscribers.stop()
    expected = len(deliveries.acked)
    sse, sse_missing = _delays(deliveries, "sse")
    graphql, graphql_missing = _delays(deliveries, "graphql")
    print(f"\n{args.sse} SSE + {args.graphql} GraphQL subscribers ({args.users} users, {args.clients} "
          f"process{'es' if args.clients > 1 else ''}), connected in "
          f"{connect_seconds:.1f} s; {expected} writes at {args.rate:g}/s", flush=True)
    print(f"delay write-ack -> delivery (steady writes: {busy}):")
    print(_line("SSE", sse, expected * args.sse))
    print(_line("GraphQL", graphql, expected * args.graphql))
    if sse_missing or graphql_missing:
        print(f"  writes some subscriber never got: SSE {sse_missing}, GraphQL {graphql_missing}")
    per = (rss_after - rss_before) / max(1, total)
    print(f"server memory: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB with subscribers: "
          f"{per:.1f} KiB per subscriber")
    print(f"write throughput ({args.writers} closed-loop writers, {args.burst:g} s): {without:.0f}/s "
          f"({cpu_without:.1f} server CPU ms per write; the writers {writers_without:.0%} of a core) without "
          f"subscribers, {with_subscribers:.0f}/s ({cpu_with:.1f} ms, fan-out included; the writers "
          f"{writers_with:.0%}, the subscribers' reading {clients_busy:.0%} of a core) with them: "
          f"{with_subscribers / without:.2f}")
    print(f"  during it: {burst_delivered} of {made * total} deliveries ({made} writes to {total} subscribers)")


def _bench(workspace: Workspace, args: argparse.Namespace) -> int:
    print(f"temp dir {workspace.dir}; load average before start {os.getloadavg()[0]:.2f}", flush=True)
    database = workspace.start_database()
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": "bench_live",
           "RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024",
           "RESTIFY_LIVE_MAX_PER_USER": str(args.sse + args.graphql), "RESTIFY_LIVE_MAX_QUEUE": "1000",
           # Its users register from one address, more than the registration throttle lets one address.
           "RESTIFY_AUTH_REGISTRATIONS_PER_ADDRESS": str(max(args.users, 1) * 2),
           # Its writers write as fast as they can: what the feeds deliver then, not one user's allowed pace.
           "RESTIFY_THROTTLE_WRITES_PER_MINUTE": "0"}
    port = free_port()
    service = workspace.serve(env, port, 1)
    _run(port, service.process.pid, args)
    service.check_alive()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.live", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sse", type=int, default=1000, help="SSE subscribers (default 1000)")
    parser.add_argument("--graphql", type=int, default=200, help="GraphQL subscribers (default 200)")
    parser.add_argument("--users", type=int, default=20, help="distinct users the subscribers log in as")
    parser.add_argument("--clients", type=int, default=1,
                        help="processes the subscribers are spread over (default 1)")
    parser.add_argument("--rate", type=float, default=10.0, help="steady writes per second (default 10)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of steady writes (default 10)")
    parser.add_argument("--writers", type=int, default=8, help="closed-loop writers for the throughput runs")
    parser.add_argument("--burst", type=float, default=5.0, help="seconds of each throughput run (default 5)")
    args = parser.parse_args(argv)
    return in_workspace("restify-live-", lambda workspace: _bench(workspace, args))


if __name__ == "__main__":
    sys.exit(main())
