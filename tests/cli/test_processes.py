"""`restify serve --processes N` (issue 3 item 7), read from /proc: N worker processes, each listening on
the port through its own SO_REUSEPORT socket, keep-alive clients spread over them, and a stop that
leaves no process behind."""
import http.client
import json
import os
import time
from pathlib import Path

import pytest

from service.core.kernel.machine import cores
from tests.processes import FAST, REQUEST_WAIT, ROOT, START_WAIT, Server, register

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")

LISTEN, ESTABLISHED = "0A", "01"
CLIENTS = 16


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def sockets(port: int, state: str) -> set[int]:
    """Inodes of the TCP sockets whose local port is `port`, in `state`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            columns = line.split()
            if int(columns[1].rsplit(":", 1)[1], 16) == port and columns[3] == state:
                found.add(int(columns[9]))
    return found


def open_files(pid: int) -> list[str]:
    """What a process's open file descriptors point to (`socket:[inode]` for a socket)."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.append(os.readlink(fd))
        except OSError:  # closed meanwhile
            continue
    return found


def owned(pid: int) -> set[int]:
    """Inodes of the sockets among a process's open files."""
    return {int(target[8:-1]) for target in open_files(pid) if target.startswith("socket:[")}


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def wait_until_every_worker_is_ready(server: Server) -> None:
    """The first worker answers before the second listens; the supervisor's serving line comes
    only when every worker is ready."""
    deadline = time.monotonic() + START_WAIT
    while "Restify serving" not in Path(server.log.name).read_text():
        assert time.monotonic() < deadline and server.process.poll() is None, Path(server.log.name).read_text()
        time.sleep(0.05)


def test_serve_processes_gives_each_worker_its_own_socket_and_spreads_clients(database_env, tmp_path):
    server = Server(ROOT, {**FAST, **database_env}, "--processes", "2", log_dir=tmp_path)
    clients: list[http.client.HTTPConnection] = []
    try:
        wait_until_every_worker_is_ready(server)
        workers = children(server.process.pid)
        assert len(workers) == 2
        listening = sockets(server.port, LISTEN)
        assert len(listening) == 2  # one listening socket per worker, not one shared
        mine = [owned(worker) & listening for worker in workers]
        assert [len(inodes) for inodes in mine] == [1, 1] and mine[0] != mine[1]
        assert not owned(server.process.pid) & listening  # the supervisor accepts nothing

        for _ in range(CLIENTS):  # keep-alive connections, all open at once
            client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_WAIT)
            client.request("GET", "/api/restify/tags")
            response = client.getresponse()
            response.read()
            assert response.status == 200
            clients.append(client)
        accepted = sockets(server.port, ESTABLISHED)
        per_worker = [len(owned(worker) & accepted) for worker in workers]
        # The kernel hashes connections over both sockets: all 16 on one worker has odds of 2 in 65,536.
        assert sum(per_worker) == CLIENTS and min(per_worker) > 0, per_worker
        assert "processes: 2" in Path(server.log.name).read_text()
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0
    assert not any(alive(worker) for worker in workers)


def slot_files(pid: int) -> set[str]:
    """The hashing lane's slot files among a process's open files."""
    return {target for target in open_files(pid) if target.endswith(".lock") and "restify-hashing-" in target}


def test_the_workers_hash_passwords_on_the_same_slots_and_the_slots_go_with_them(database_env, tmp_path):
    unthrottled = {"RESTIFY_AUTH_LOGIN_ATTEMPTS_PER_ACCOUNT": "0", "RESTIFY_AUTH_LOGIN_ATTEMPTS_PER_ADDRESS": "0"}
    server = Server(ROOT, {**FAST, **database_env, **unthrottled}, "--processes", "2", log_dir=tmp_path)
    clients: list[http.client.HTTPConnection] = []
    try:
        wait_until_every_worker_is_ready(server)
        workers = children(server.process.pid)
        register(server.port)
        wrong = json.dumps({"email": "ann@example.com", "password": "not-the-password"})
        for _ in range(CLIENTS):  # keep-alive connections over both workers, each checking a password
            client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_WAIT)
            client.request("POST", "/api/login", wrong, {"Content-Type": "application/json"})
            response = client.getresponse()
            response.read()
            assert response.status == 401
            clients.append(client)
        held = [slot_files(worker) for worker in workers]
        # Half the cores of this machine, at least one, shared: both workers opened the same files.
        assert held[0] == held[1] and len(held[0]) == max(1, cores() // 2), held
        directory = Path(next(iter(held[0]))).parent
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0
    assert not directory.exists()
