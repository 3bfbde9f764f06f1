"""`restify serve`: the web process, or N worker processes on one port.

With `--processes N` (N > 1) the parent starts the database (if needed), forks N
children and only supervises: it forwards SIGTERM/SIGINT, waits, restarts
nothing. Each child binds its *own* SO_REUSEPORT socket after the fork so the
kernel spreads new connections over the children; a socket shared from before
the fork (tornado's fork_processes) let keep-alive clients pile onto one child.
Each child builds its own Motor client: a client must never cross a fork.

Before it listens (before forking), `serve` cleans up what a crash left: stale temporary files
(service/console/prune.py) and unfinished bulk writes (service/console/recovery.py); every
process then takes back unfinished bulk writes once a minute, sends the outbox's mail while it
holds the sender's lease (service/mail/sender.py), and each webhook's deliveries while it holds that
webhook's lease (service/webhooks/sender.py).
"""
import asyncio
import gc
import logging
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from service.config import Settings
from service.core.kernel.passwords import share_lane
from service.core.operations import auth
from service.console import logs
from service.console.prune import remove_stale_temporary_files
from service.console.recovery import recover_at_start, recover_periodically
from service.console.runtime import build, database_uri, load_registry
from service.console.watching import follow_schema, run_worker
from service.graphql.service import GraphQLService
from service.console.application import make_server
from service.http.metrics import MULTIPROC_ENV, enabled as metrics_enabled, process_exited
from service.mail import run_sender
from service.webhooks import place, run_webhooks

log = logging.getLogger("restify")

READY_TIMEOUT = 60.0       # seconds for every child to load the app and listen
SHUTDOWN_GRACE = 10.0      # seconds after a forwarded signal before children are killed

# The collector's thresholds while serving. Python's (700, 10, 10) collects the youngest objects every
# 700 allocations and walks everything alive every hundredth time: with a thousand live subscribers a
# full walk stalls the loop for tens of milliseconds, several times a second under writes (bench.live:
# p99 141 -> 61 ms with these). A request's garbage is freed by reference counting, not by the collector.
GC_THRESHOLDS = (50_000, 20, 100)


def _serving_line(host: str, port: int, names: list[str], uri: str, processes: int) -> str:
    listed = ", ".join(sorted(names)) or "none"
    extra = f"; processes: {processes}" if processes > 1 else ""
    return f"Restify serving http://{host}:{port} (repositories: {listed}; database: {uri}{extra})"


async def _run_server(settings: Settings, uri: str, listen: Callable[[HTTPServer], None],
                      on_ready: Callable[[list[str]], None], watch: bool = False) -> None:
    """Builds the core (and its Motor client) in this process, serves until SIGTERM/SIGINT.

    The process always follows schema/ (a separate `restify watch` may feed it); with
    `watch` it also runs the worker that regenerates schema/ from the repositories."""
    app = build(settings, uri)
    await app.ready()
    await place(app)  # a new webhook's changes count from before the first request this process serves
    graphql = GraphQLService(app)
    server = make_server(app, graphql)
    # What start-up built (modules, schemas, the app) lives as long as the process: kept out of
    # the collector's reach, so a full collection under load does not walk it again and again.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    listen(server)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    live = [asyncio.create_task(follow_schema(app, graphql, stop)),
            asyncio.create_task(recover_periodically(app, stop)),
            asyncio.create_task(run_sender(settings, app.db, stop)),  # one process at a time sends (a lease)
            asyncio.create_task(run_webhooks(app, stop)),  # one process at a time per webhook (a lease each)
            asyncio.create_task(auth.follow_identities(app, stop))]  # who a token is, forgotten when it changes
    if watch:
        live.append(asyncio.create_task(run_worker(settings, stop)))
    on_ready(list(app.registry.resources))
    await stop.wait()
    await asyncio.gather(*live, return_exceptions=True)
    server.stop()
    await server.close_all_connections()
    app.db.close()


def _serve_one(settings: Settings, uri: str, port: int, host: str, watch: bool = False) -> int:
    def ready(names: list[str]) -> None:
        print(_serving_line(host, port, names, uri, 1), flush=True)

    asyncio.run(_run_server(settings, uri, lambda server: server.listen(port, address=host), ready, watch))
    return 0


# -- several processes ------------------------------------------------------------------------

def _resolve_port(port: int, host: str) -> socket.socket:
    """A bound but not listening SO_REUSEPORT socket: turns port 0 into a real port and fails
    fast on a port taken by something else; it never accepts, so it steals no connection."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    holder = socket.socket(family, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        holder.bind((host, port))
    except OSError:
        holder.close()
        raise
    return holder


def _child(settings: Settings, uri: str, port: int, host: str, ready_fd: int) -> None:
    """Runs in the forked child; never returns (os._exit), so the parent's `finally`
    blocks — which stop the embedded database — never run here."""
    code = 1
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)

        def listen(server: HTTPServer) -> None:
            server.add_sockets(bind_sockets(port, address=host, reuse_port=True))

        def ready(names: list[str]) -> None:
            os.write(ready_fd, b"1")
            os.close(ready_fd)

        asyncio.run(_run_server(settings, uri, listen, ready))
        code = 0
    except BaseException:  # noqa: BLE001 - a child reports everything and exits
        log.exception("worker process %d failed", os.getpid())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _Children:
    """The parent's view of its workers: signals, reaping, exit codes."""

    def __init__(self) -> None:
        self.alive: set[int] = set()
        self.worst = 0
        self.stopping_since: float | None = None

    def signal(self, signum: int) -> None:
        for pid in list(self.alive):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                self.alive.discard(pid)

    def forward(self, signum: int, _frame: object) -> None:
        if self.stopping_since is None:
            self.stopping_since = time.monotonic()
        self.signal(signum)

    def reap(self) -> None:
        while self.alive:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.alive.clear()
                return
            if pid == 0:
                return
            self.alive.discard(pid)
            process_exited(pid)
            code = os.waitstatus_to_exitcode(status)
            if code != 0 and self.stopping_since is None:
                log.error("worker process %d exited with %d; it is not restarted", pid, code)
            if code > 0:
                self.worst = max(self.worst, code)

    def wait_all(self) -> None:
        """Waits for every child; kills the ones still there SHUTDOWN_GRACE s after a stop signal."""
        while self.alive:
            self.reap()
            if self.stopping_since is not None and time.monotonic() - self.stopping_since > SHUTDOWN_GRACE:
                self.signal(signal.SIGKILL)
            time.sleep(0.05)


def _await_ready(children: _Children, ready_fd: int, expected: int) -> bool:
    received = 0
    deadline = time.monotonic() + READY_TIMEOUT
    while received < expected and time.monotonic() < deadline:
        readable, _, _ = select.select([ready_fd], [], [], 0.1)
        if readable:
            chunk = os.read(ready_fd, expected)
            if not chunk:  # every writer closed: someone died before it was ready
                break
            received += len(chunk)
        children.reap()
        if len(children.alive) < expected:
            break
    return received >= expected


@contextmanager
def _shared_metrics(settings: Settings) -> Iterator[None]:
    """A fresh directory for the workers' metric files (prometheus_client's multiprocess mode),
    set before forking so every child writes there and each scrape sums them; removed at exit."""
    if not metrics_enabled(settings):
        yield
        return
    directory = tempfile.mkdtemp(prefix="restify-metrics-")
    previous = os.environ.get(MULTIPROC_ENV)
    os.environ[MULTIPROC_ENV] = directory
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(MULTIPROC_ENV, None)
        else:
            os.environ[MULTIPROC_ENV] = previous
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def _shared_hash_lane(settings: Settings) -> Iterator[None]:
    """The workers' password hashing lanes take turns on the same slots (`passwords.share_lane`), so
    N processes hash on as many cores as one would; the slots' directory is removed at exit."""
    directory = tempfile.mkdtemp(prefix="restify-hashing-")
    try:
        share_lane(Path(directory), settings.cap("auth", "hash_threads"))
        yield
    finally:
        share_lane(None)
        shutil.rmtree(directory, ignore_errors=True)


def _serve_many(settings: Settings, uri: str, port: int, host: str, processes: int) -> int:
    with _shared_metrics(settings), _shared_hash_lane(settings):
        return _fork_workers(settings, uri, port, host, processes)


def _fork_workers(settings: Settings, uri: str, port: int, host: str, processes: int) -> int:
    names = list(load_registry(settings).resources)  # fail before forking
    holder = _resolve_port(port, host)
    port = holder.getsockname()[1]
    read_fd, write_fd = os.pipe()
    children = _Children()
    try:
        for _ in range(processes):
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                _child(settings, uri, port, host, write_fd)
            children.alive.add(pid)
        os.close(write_fd)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, children.forward)
        if not _await_ready(children, read_fd, processes):
            log.error("not every worker process started; stopping the others")
            children.forward(signal.SIGTERM, None)
            children.wait_all()
            return children.worst or 1
        holder.close()
        print(_serving_line(host, port, names, uri, processes), flush=True)
        children.wait_all()
        return children.worst
    except BaseException:
        children.forward(signal.SIGTERM, None)
        children.wait_all()
        raise
    finally:
        holder.close()
        os.close(read_fd)


def serve(settings: Settings, port: int | None, host: str | None, processes: int = 1, watch: bool = False,
          log_format: str | None = None) -> int:
    """Serves until SIGTERM/SIGINT; returns the exit code. `processes` 0 means one per CPU.
    `watch` regenerates schema/ when repositories change (in the single process, or in the
    parent of several: every child follows schema/ and reloads). `log_format` overrides `log.format`."""
    logs.configure(settings, log_format)
    port = port or int(settings.get("server", "port"))
    host = host or str(settings.get("server", "host"))
    processes = processes or os.cpu_count() or 1
    with database_uri(settings) as uri:
        remove_stale_temporary_files(settings, uri)
        recover_at_start(settings, uri)
        if processes == 1:
            return _serve_one(settings, uri, port, host, watch)
        if watch:
            return _serve_many_watched(settings, uri, port, host, processes)
        return _serve_many(settings, uri, port, host, processes)


def _serve_many_watched(settings: Settings, uri: str, port: int, host: str, processes: int) -> int:
    """The worker runs as its own `restify watch` process (as in the Procfile); every child
    follows schema/ and reloads, like any web process."""
    import subprocess

    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "--app-dir", str(settings.app_dir), "watch"])
    try:
        return _serve_many(settings, uri, port, host, processes)
    finally:
        worker.terminate()
        worker.wait(timeout=10)
