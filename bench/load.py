"""Load generators: N keep-alive connections for a fixed time, each sending one request,
reading the whole response, and sending the next.

`python_load` is a lean asyncio client (raw streams, pre-built request bytes) that needs
nothing installed; `wrk_load` uses wrk when it is on PATH, which costs far less CPU —
it matters on a small machine, where the client shares the cores with the servers.
"""
import asyncio
import json
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"


@dataclass
class LoadResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    failures: int        # non-2xx answers and broken connections
    client_cpu_s: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


# -- the asyncio client -----------------------------------------------------------------------

def _request_bytes(target: Target) -> bytes:
    headers = {"Host": f"{target.host}:{target.port}", **target.headers}
    if target.body or target.method in ("POST", "PUT", "PATCH"):
        headers["Content-Length"] = str(len(target.body))
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"{target.method} {target.path} HTTP/1.1\r\n{head}\r\n".encode() + target.body


def _parse_head(head: bytes) -> tuple[int, int, bool]:
    """Status, Content-Length, and whether the server will close the connection."""
    status = int(head[9:12])
    lowered = head.lower()
    length = 0
    start = lowered.find(b"\r\ncontent-length:")
    if start >= 0:
        end = lowered.index(b"\r\n", start + 2)
        length = int(lowered[start + 17:end])
    return status, length, b"\r\nconnection: close" in lowered


async def _connection(target: Target, raw: bytes, stop_at: float, latencies: list[float],
                      failures: list[int]) -> None:
    reader = writer = None
    try:
        while time.perf_counter() < stop_at:
            if writer is None:
                reader, writer = await asyncio.open_connection(target.host, target.port)
            started = time.perf_counter()
            try:
                writer.write(raw)
                status, length, close = _parse_head(await reader.readuntil(b"\r\n\r\n"))
                if length:
                    await reader.readexactly(length)
            except (OSError, asyncio.IncompleteReadError):
                failures.append(0)
                writer.close()
                reader = writer = None
                continue
            latencies.append(time.perf_counter() - started)
            if not 200 <= status < 300:
                failures.append(status)
            if close:
                writer.close()
                reader = writer = None
    finally:
        if writer is not None:
            writer.close()


def _percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


async def _python_load(target: Target, connections: int, duration: float) -> tuple[list[float], list[int], float]:
    raw = _request_bytes(target)
    latencies: list[float] = []
    failures: list[int] = []
    started = time.perf_counter()
    await asyncio.gather(*(_connection(target, raw, started + duration, latencies, failures)
                           for _ in range(connections)))
    return latencies, failures, time.perf_counter() - started


def python_load(target: Target, connections: int, duration: float) -> LoadResult:
    before = os.times()
    latencies, failures, seconds = asyncio.run(_python_load(target, connections, duration))
    after = os.times()
    latencies.sort()
    return LoadResult(
        requests=len(latencies), seconds=seconds,
        p50_ms=_percentile(latencies, 0.50) * 1000, p99_ms=_percentile(latencies, 0.99) * 1000,
        failures=len(failures), client_cpu_s=(after.user - before.user) + (after.system - before.system),
    )


# -- wrk ------------------------------------------------------------------------------------

_WRK_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH %d %d %d %d %.1f %.1f\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
"""


def _wrk_script(target: Target) -> str:
    # json.dumps of ASCII text is a valid Lua string literal.
    lines = [f"wrk.method = {json.dumps(target.method)}"]
    if target.body:
        lines.append(f"wrk.body = {json.dumps(target.body.decode('ascii'))}")
    for name, value in target.headers.items():
        lines.append(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
    return "\n".join(lines) + _WRK_DONE


def wrk_load(target: Target, connections: int, duration: float, workdir: Path) -> LoadResult:
    script = workdir / "wrk-case.lua"
    script.write_text(_wrk_script(target))
    # One thread: a single wrk event loop drives 64 connections easily and leaves the cores to the servers.
    command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s", "--timeout", "10s",
               "-s", str(script), target.url]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    finished = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((text for text in finished.stdout.splitlines() if text.startswith("BENCH ")), None)
    if finished.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr or finished.stdout}")
    requests, micros, broken, bad_status, p50, p99 = line.split()[1:]
    return LoadResult(
        requests=int(requests), seconds=int(micros) / 1e6, p50_ms=float(p50) / 1000, p99_ms=float(p99) / 1000,
        failures=int(broken) + int(bad_status),
        client_cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
    )


def run_load(target: Target, connections: int, duration: float, client: str, workdir: Path) -> LoadResult:
    if client == "wrk":
        return wrk_load(target, connections, duration, workdir)
    return python_load(target, connections, duration)
