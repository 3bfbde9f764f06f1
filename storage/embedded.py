"""Starts and stops the embedded nx-27017 server (MongoDB wire protocol over SQLite).

It runs as a child process with its own pid and log files, so several
instances (a dev server, a test run) never trip over each other's pid file.
"""
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


_LOWEST_PICKED = 20000


def _outgoing_ports() -> tuple[int, int]:
    """The range the kernel takes local ports of outgoing connections from (Linux's default elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port free now, for a server another process starts in a moment.

    Picked below the range outgoing connections take their local ports from: a port the kernel hands out
    (bind to 0) could be taken by any client connection before the server binds it.
    """
    low = _outgoing_ports()[0]
    for _ in range(64 if low > _LOWEST_PICKED else 0):
        port = random.randrange(_LOWEST_PICKED, low)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class EmbeddedServer:
    def __init__(self, data_dir: str | os.PathLike, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port or free_port()
        self._process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://{self.host}:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / f"nx-27017-{self.port}.pid"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = 15.0) -> "EmbeddedServer":
        if _listening(self.host, self.port):
            raise RuntimeError(f"cannot start the embedded database: {self.host}:{self.port} is already in use")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.data_dir / "nx-27017.log"
        command = [
            sys.executable, "-m", "nx_27017.nx_27017",
            "--data-dir", str(self.data_dir),
            "--host", self.host,
            "--port", str(self.port),
            "--pid-file", str(self.pid_file),
            "--log-file", str(log),
        ]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"embedded database exited at start-up; see {log}")
            if _listening(self.host, self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded database did not listen on {self.uri} within {timeout}s; see {log}")

    def pause(self) -> None:
        """Stops the server process (SIGSTOP): connections stay open and nothing answers."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Lets a paused server run on (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        if self._process is None or not self.running:
            raise RuntimeError("the embedded database is not running")
        self._process.send_signal(number)

    def stop(self, timeout: float = 10.0) -> None:
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self._process.terminate()
            if not self.wait_stopped(timeout):
                self._process.kill()
                self._process.wait()
                self.pid_file.unlink(missing_ok=True)  # a killed server cannot remove its own
        self._process = None

    def wait_stopped(self, timeout: float) -> bool:
        """Whether the process ended within `timeout` seconds of a SIGTERM.

        The kernel hands a process's signal to any of its threads that is free to take it. The
        server runs its handler on the main thread, which sleeps in its event loop's select() until
        something arrives: a signal taken by a worker thread waits for the next connection. So each
        wait ends with one, which wakes the loop to act on the signal."""
        if self._process is None:
            return True
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._process.wait(timeout=min(0.1, max(deadline - time.monotonic(), 0.0)))
                return True
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    return False
                _listening(self.host, self.port)

    def __enter__(self) -> "EmbeddedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
