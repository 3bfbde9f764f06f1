"""Child processes for the benchmark, and their CPU time read from /proc (no psutil)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from storage import EmbeddedServer

ROOT = Path(__file__).resolve().parent.parent

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (all its threads), 0.0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return 0.0
    # The command name may hold spaces or ')': the fields start after the last ')'.
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def total_cpu(pids: Iterable[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def machine_busy_seconds() -> float:
    """CPU time every core spent busy since boot (all processes, ours and everyone else's)."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (values + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def descendants(root: int) -> list[int]:
    """Every live process below `root`, found by walking /proc (children of children too)."""
    parents = {int(entry): _parent_of(int(entry)) for entry in os.listdir("/proc") if entry.isdigit()}
    found: list[int] = []
    frontier = [root]
    while frontier:
        current = frontier.pop()
        kids = [pid for pid, parent in parents.items() if parent == current]
        found.extend(kids)
        frontier.extend(kids)
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Managed:
    """A child process with its output in a log file, stopped by pid (never by name)."""

    def __init__(self, name: str, command: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.name = name
        self.log = log
        self._handle = log.open("wb")
        # Own session: a Ctrl-C at the terminal reaches only the benchmark, which then stops
        # this process itself, in order.
        self.process = subprocess.Popen(command, stdout=self._handle, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
        self.pids: list[int] = [self.process.pid]
        self._commands: dict[int, str] = {}

    def wait_for(self, marker: str, count: int = 1, timeout: float = 60.0) -> None:
        """Waits until `marker` appears `count` times in the log; then records the process tree."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log}")
            if self.log.read_text(errors="replace").count(marker) >= count:
                self.pids = [self.process.pid, *descendants(self.process.pid)]
                self._commands = {pid: command_line(pid) for pid in self.pids}
                return
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} was not ready within {timeout}s; see {self.log}")

    def check_alive(self) -> None:
        if self.process.poll() is not None or not all(command_line(pid) for pid in self.pids):
            raise RuntimeError(f"{self.name} (or one of its processes) exited during the benchmark; see {self.log}")

    def cpu(self) -> dict[int, float]:
        return {pid: cpu_seconds(pid) for pid in self.pids}

    def stop(self, timeout: float = 15.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # Workers whose parent died without reaping them must not outlive the benchmark.
        for pid in self.pids[1:]:
            if command_line(pid) and command_line(pid) == self._commands.get(pid):  # not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._handle.close()


class Workspace:
    """A temp dir holding an embedded database and the processes a bench command starts."""

    def __init__(self, prefix: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))
        self.database: EmbeddedServer | None = None
        self._started: list[Managed] = []

    def start_database(self) -> EmbeddedServer:
        self.database = EmbeddedServer(self.dir / "db").start()
        return self.database

    def start(self, name: str, command: list[str], env: dict[str, str]) -> Managed:
        managed = Managed(name, command, self.dir / f"{name}.log", env, ROOT)
        self._started.append(managed)
        return managed

    def serve(self, env: dict[str, str], port: int, processes: int) -> Managed:
        """`restify serve` from this checkout, ready to answer."""
        service = self.start("service", [sys.executable, "-m", "service.cli", "--app-dir", str(ROOT), "serve",
                                         "--processes", str(processes), "--port", str(port)], env)
        service.wait_for("Restify serving")
        return service

    def close(self, keep: bool) -> None:
        for managed in reversed(self._started):
            managed.stop()
        if self.database is not None:
            self.database.stop()
        if keep:
            print(f"logs and data kept in {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM takes the same clean-up path as Ctrl-C


def in_workspace(prefix: str, command: Callable[[Workspace], int]) -> int:
    """Runs `command` in a fresh workspace and stops everything it started, also on an error,
    Ctrl-C or SIGTERM; the workspace is kept (and named) only when the command did not succeed."""
    signal.signal(signal.SIGTERM, _raise_interrupt)
    workspace = Workspace(prefix)
    code = 1
    try:
        code = command(workspace)
        return code
    except KeyboardInterrupt:
        print("interrupted; stopping everything", file=sys.stderr)
        code = 130
        return code
    finally:
        workspace.close(keep=code != 0)

