"""`/metrics` of `restify serve --processes 2` sums what every worker counted: whichever worker
answers the scrape, it reports the requests the other one served too. The workers share a fresh
temporary directory of metric files, which is gone when `serve` exits."""
import http.client
from pathlib import Path

import pytest

from tests.cli.test_processes import ESTABLISHED, children, owned, sockets
from tests.processes import FAST, REQUEST_WAIT, ROOT, Server
from tests.prometheus import samples

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")

CLIENTS = 16
MISSING = "/api/restify/tags/000000000000000000000000"
COUNTED = ("rest", "GET", "/api/restify/{resource}/{id}", "404")


def get(client: http.client.HTTPConnection, path: str) -> tuple[int, str]:
    client.request("GET", path)
    response = client.getresponse()
    return response.status, response.read().decode()


def test_a_scrape_from_either_worker_sums_both(database_env, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    server = Server(ROOT, {**FAST, **database_env, "TMPDIR": str(temp)}, "--processes", "2", log_dir=tmp_path)
    clients: list[http.client.HTTPConnection] = []
    try:
        workers = children(server.process.pid)
        for _ in range(CLIENTS):  # keep-alive connections, all open at once, spread by the kernel
            client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_WAIT)
            assert get(client, MISSING)[0] == 404
            clients.append(client)
        accepted = sockets(server.port, ESTABLISHED)
        per_worker = [len(owned(worker) & accepted) for worker in workers]
        assert sum(per_worker) == CLIENTS and min(per_worker) > 0, per_worker  # both served some

        (shared,) = temp.glob("restify-metrics-*")
        assert {f.name for f in shared.iterdir()} >= {f"histogram_{pid}.db" for pid in workers}

        # Each keep-alive connection is answered by the worker that accepted it: both sum both.
        for client in clients:
            status, text = get(client, "/metrics")
            assert status == 200
            assert samples(text, "restify_requests_total")[COUNTED] == CLIENTS
            assert samples(text, "restify_request_duration_seconds_count")[COUNTED] == CLIENTS
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0
    assert list(temp.glob("restify-metrics-*")) == []  # cleaned at exit
