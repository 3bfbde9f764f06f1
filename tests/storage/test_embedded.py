"""EmbeddedServer: the nx-27017 child process the app and the tests start."""
import os
import signal
import subprocess
import time
from pathlib import Path
import socket

import pymongo
import pytest

from storage import EmbeddedServer
from storage.embedded import free_port


@pytest.fixture
def start():
    """Starts servers for one test and stops every one of them afterwards."""
    started: list[EmbeddedServer] = []

    def start_server(data_dir, **options) -> EmbeddedServer:
        server = EmbeddedServer(data_dir, **options)
        started.append(server)
        return server.start()

    yield start_server
    for server in started:
        server.stop()


def add_note(server: EmbeddedServer, text: str) -> None:
    with pymongo.MongoClient(server.uri, serverSelectionTimeoutMS=30_000) as client:
        client.app.notes.insert_one({"text": text})


def note_texts(server: EmbeddedServer) -> list[str]:
    with pymongo.MongoClient(server.uri, serverSelectionTimeoutMS=30_000) as client:
        return [note["text"] for note in client.app.notes.find()]


def accepts_connections(server: EmbeddedServer) -> bool:
    try:
        with socket.create_connection((server.host, server.port), timeout=0.5):
            return True
    except OSError:
        return False


def test_start_keeps_its_pid_and_log_files_in_the_data_dir(tmp_path, start):
    server = start(tmp_path / "db")
    pid_file = tmp_path / "db" / f"nx-27017-{server.port}.pid"
    assert server.running
    assert server.uri == f"mongodb://127.0.0.1:{server.port}"
    assert (tmp_path / "db" / "nx-27017.log").is_file()
    os.kill(int(pid_file.read_text()), 0)  # the pid file names a live process
    assert [p.name for p in tmp_path.iterdir()] == ["db"]
    server.stop()
    assert not server.running
    assert not accepts_connections(server)
    assert not pid_file.exists()


def test_data_survives_a_stop_and_start_with_the_same_data_dir(tmp_path, start):
    first = start(tmp_path)
    add_note(first, "kept")
    first.stop()
    second = start(tmp_path)
    assert note_texts(second) == ["kept"]


def test_two_servers_run_at_once_with_separate_data(tmp_path, start):
    one, two = start(tmp_path / "one"), start(tmp_path / "two")
    assert one.port != two.port and one.running and two.running
    add_note(one, "only in one")
    assert note_texts(one) == ["only in one"]
    assert note_texts(two) == []


def test_stop_is_idempotent(tmp_path, start):
    never_started = EmbeddedServer(tmp_path / "idle")
    never_started.stop()
    server = start(tmp_path / "db")
    server.stop()
    server.stop()
    assert not server.running


def test_context_manager_starts_and_stops(tmp_path):
    with EmbeddedServer(tmp_path) as server:
        assert accepts_connections(server)
    assert not server.running and not accepts_connections(server)


def test_start_on_a_port_in_use_fails(tmp_path, start):
    taken = start(tmp_path / "one")
    with pytest.raises(RuntimeError):
        start(tmp_path / "two", port=taken.port)


def asleep(pid: int) -> list[int]:
    """The ids of a process's worker threads once every thread of it sleeps (its main thread in its
    event loop's epoll wait, the rest on futexes); waits for that."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        waits = {int(tid): Path(f"/proc/{pid}/task/{tid}/wchan").read_text() for tid in os.listdir(f"/proc/{pid}/task")}
        if "epoll" in waits.pop(pid) and waits and all("futex" in wait for wait in waits.values()):
            return list(waits)
        time.sleep(0.01)
    raise AssertionError(f"the server's threads did not settle: {waits}")


def test_stop_ends_a_server_whose_signal_was_taken_by_a_worker_thread(tmp_path, start):
    server = start(tmp_path)
    add_note(server, "its worker threads exist now")  # and the client is gone: nothing else wakes the server
    process = server._process
    workers = asleep(process.pid)
    os.kill(workers[0], signal.SIGTERM)  # kill() with a thread's id offers the signal to that thread first
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)  # the main thread sleeps on: the signal is noted, not acted on
    assert server.wait_stopped(timeout=30)
    assert process.returncode == 0  # its own SIGTERM handler ran: not killed
    assert not server.pid_file.exists()


def test_a_free_port_is_outside_the_range_outgoing_connections_take():
    low, high = (int(part) for part in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = {free_port() for _ in range(20)}
    assert all(port < low or port > high for port in ports), (ports, low, high)
    for port in ports:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
