"""Deploying: the listening address (`server.host`, `HOST`, `--host`) and the Procfile under honcho."""
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage.embedded import free_port
from tests.processes import ROOT, START_WAIT, Server, request

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")

LISTEN = "0A"


def listening_addresses(port: int) -> set[str]:
    """The local addresses of IPv4 sockets listening on `port`, dotted (from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        columns = line.split()
        address, _, hex_port = columns[1].partition(":")
        if int(hex_port, 16) == port and columns[3] == LISTEN:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def own_address() -> str | None:
    """A non-loopback IPv4 address of this machine (the one a default route would use)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.255", 9))  # no packet is sent: this only picks the outgoing address
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_serve_listens_on_loopback_by_default(database_env, tmp_path):
    server = Server(ROOT, {**database_env, "HOST": ""}, log_dir=tmp_path)  # empty: unset, whatever the shell has
    try:
        assert listening_addresses(server.port) == {"127.0.0.1"}
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("how", ["env", "setting", "flag"])
def test_the_listening_address_comes_from_host_env_the_setting_or_the_flag(database_env, tmp_path, how):
    env = dict(database_env)
    extra: tuple[str, ...] = ()
    if how == "env":
        env["HOST"] = "0.0.0.0"
    elif how == "setting":
        env["RESTIFY_SERVER_HOST"] = "0.0.0.0"
    else:
        env["HOST"] = "127.0.0.1"
        extra = ("--host", "0.0.0.0")  # the flag wins over the environment
    server = Server(ROOT, env, *extra, log_dir=tmp_path)
    try:
        assert listening_addresses(server.port) == {"0.0.0.0"}
        log = Path(server.log.name).read_text()
        assert f"Restify serving http://0.0.0.0:{server.port} " in log
    finally:
        assert server.stop() == 0


def test_the_procfile_web_process_answers_on_a_non_loopback_address(database_env, tmp_path):
    assert "web: restify serve --host 0.0.0.0 --port $PORT" in (ROOT / "Procfile").read_text().splitlines()
    port = free_port()
    honcho = Path(sys.executable).with_name("honcho")
    log = (tmp_path / "honcho.log").open("w")
    bin_dir = str(Path(sys.executable).parent)  # `restify` of this environment, as a deployed one has it
    process = subprocess.Popen([str(honcho), "-f", str(ROOT / "Procfile"), "-d", str(ROOT), "start", "-p", str(port),
                                "web"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
                               env={**os.environ, **database_env, "PORT": str(port),
                                    "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")})
    try:
        deadline = time.monotonic() + START_WAIT
        while "0.0.0.0" not in listening_addresses(port):
            assert process.poll() is None, (tmp_path / "honcho.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "honcho.log").read_text()
            time.sleep(0.1)
        address = own_address()
        if address is not None:  # reach it the way another host would
            status, body = request(port, "GET", "/api/restify/tags", host=address)
            assert status == 200 and body["data"] == []
        process.send_signal(signal.SIGTERM)  # honcho stops its processes and exits
        process.wait(timeout=START_WAIT)
        deadline = time.monotonic() + START_WAIT  # honcho signals the process group; the server closes its socket
        while listening_addresses(port):
            assert time.monotonic() < deadline, "the web process did not stop"
            time.sleep(0.1)
        output = (tmp_path / "honcho.log").read_text()
        assert "web.1 stopped" in output and "Traceback" not in output
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=START_WAIT)
        log.close()
