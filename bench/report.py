"""The benchmark's tables: throughput and latency, then where the CPU went."""
import argparse
from dataclasses import dataclass

from bench.load import LoadResult


@dataclass
class Measurement:
    load: LoadResult
    process_cpu_s: list[float]   # per server process, the (idle) supervisor first for the service
    db_cpu_s: float
    other_cpu_s: float = 0.0    # the rest of the machine: anything but servers, DB and client

    @property
    def server_cpu_s(self) -> float:
        return sum(self.process_cpu_s)

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.server_cpu_s / self.load.requests if self.load.requests else 0.0

    @property
    def db_ms_per_request(self) -> float:
        return 1000 * self.db_cpu_s / self.load.requests if self.load.requests else 0.0

    @property
    def db_busy(self) -> float:
        """Share of one core the database used: near 100% means the single-threaded DB is saturated."""
        return self.db_cpu_s / self.load.seconds if self.load.seconds else 0.0


def combine(runs: list[Measurement]) -> Measurement:
    """Rounds of one case pooled: requests, seconds and CPU add up; percentiles are averaged."""
    loads = [r.load for r in runs]
    pooled = LoadResult(
        requests=sum(x.requests for x in loads), seconds=sum(x.seconds for x in loads),
        p50_ms=sum(x.p50_ms for x in loads) / len(loads), p99_ms=sum(x.p99_ms for x in loads) / len(loads),
        failures=sum(x.failures for x in loads), client_cpu_s=sum(x.client_cpu_s for x in loads),
    )
    per_process = [sum(values) for values in zip(*(r.process_cpu_s for r in runs), strict=True)]
    return Measurement(pooled, per_process, sum(r.db_cpu_s for r in runs), sum(r.other_cpu_s for r in runs))


# (case, connections, service, bare, Eve: None where Eve has no such request or is not installed)
Row = tuple[str, int, Measurement, Measurement, Measurement | None]


def _ratio(side: LoadResult, other: LoadResult) -> float:
    return side.rps / other.rps if other.rps else 0.0


def print_throughput(rows: list[Row], args: argparse.Namespace) -> None:
    with_eve = any(row[4] is not None for row in rows)
    print(f"\nThroughput and latency: {args.processes} process(es) each, client {args.client}, "
          f"{args.rounds} x {args.duration:g} s per side and case (alternating service, bare"
          f"{', Eve' if with_eve else ''})")
    eve_heading = f" | {'Eve req/s':>9}{'p50 ms':>9}{'p99 ms':>9} | {'service/Eve':>11}" if with_eve else ""
    print(f"{'operation':<30}{'conns':>6} | {'service req/s':>13}{'p50 ms':>9}{'p99 ms':>9} | "
          f"{'bare req/s':>10}{'p50 ms':>9}{'p99 ms':>9} | {'service/bare':>12}{eve_heading}")
    failures = []
    for name, connections, service, bare, eve in rows:
        s, b = service.load, bare.load
        line = (f"{name:<30}{connections:>6} | {s.rps:>13.0f}{s.p50_ms:>9.1f}{s.p99_ms:>9.1f} | "
                f"{b.rps:>10.0f}{b.p50_ms:>9.1f}{b.p99_ms:>9.1f} | {_ratio(s, b):>12.2f}")
        if eve is not None:
            e = eve.load
            line += f" | {e.rps:>9.0f}{e.p50_ms:>9.1f}{e.p99_ms:>9.1f} | {_ratio(s, e):>11.2f}"
        elif with_eve:
            line += f" | {'-':>9}{'':>18} | {'-':>11}"
        print(line)
        for side, result in (("service", s), ("bare", b), ("Eve", eve.load if eve else None)):
            if result is not None and result.failures:
                failures.append(f"{name} x{connections}: {side} had {result.failures} failed requests")
    for line in failures:
        print(f"  !! {line}")


def _per_process(cpu: list[float]) -> str:
    return "/".join(f"{c:.1f}" for c in cpu)


_CPU_LEGEND = """
CPU used during the measured runs. Per side: server CPU s [per process; the service's idle supervisor
first], server CPU ms per request, embedded-DB CPU ms per request, and DB busy = DB CPU / wall (100% is
one core; the DB is one process whose per-database lock serializes commands). Then the load generator's
CPU s, and "other": CPU s the rest of the machine used meanwhile (service/bare); well above 0 means
other work shared the cores and the figures are disturbed."""


def print_cpu(rows: list[Row], args: argparse.Namespace) -> None:
    print(_CPU_LEGEND)
    print(f"{'operation':<30}{'conns':>6} | {'service CPU s':>20}{'ms/req':>7}{'DB ms':>7}{'DB busy':>8} | "
          f"{'bare CPU s':>20}{'ms/req':>7}{'DB ms':>7}{'DB busy':>8} | {'client s':>11} | {'other s':>11}")
    for name, connections, service, bare, _ in rows:
        cells = []
        for side in (service, bare):
            cells.append(f"{side.server_cpu_s:>6.1f} [{_per_process(side.process_cpu_s):>11}]"
                         f"{side.cpu_ms_per_request:>7.2f}{side.db_ms_per_request:>7.2f}{side.db_busy:>8.0%}")
        print(f"{name:<30}{connections:>6} | {cells[0]} | {cells[1]} | "
              f"{service.load.client_cpu_s:>5.2f}/{bare.load.client_cpu_s:<5.2f} | "
              f"{service.other_cpu_s:>5.1f}/{bare.other_cpu_s:<5.1f}")
