"""Clients identified by a Client ID Metadata Document, served by a real HTTP server of the test's own:
a good document is used, one that redirects to 127.0.0.1 or answers 10 MB is refused, nothing granted."""
import json

import pytest
from tornado.httpserver import HTTPServer
from tornado.testing import bind_unused_port
from tornado.web import Application, RequestHandler

from tests.oauth.conftest import REDIRECT, authorize_query, open_page, pkce

HUGE = 10 * 1024 * 1024


class _Document(RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"client_id": self.request.full_url(), "client_name": "Metadata agent",
                                "redirect_uris": [REDIRECT]}))


class _ToLoopback(RequestHandler):
    def get(self) -> None:
        self.redirect(f"http://127.0.0.1:{self.request.host.rpartition(':')[2]}/client.json")


class _Huge(RequestHandler):
    async def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        chunk = b" " * 65536
        for _ in range(HUGE // len(chunk)):
            self.write(chunk)
            await self.flush()
        self.finish()


@pytest.fixture
def documents(io_loop):
    """`http://localhost:<port>`: a server of client metadata documents."""
    sock, port = bind_unused_port()
    server = HTTPServer(Application([("/client.json", _Document), ("/to-loopback", _ToLoopback), ("/huge", _Huge)]))
    server.add_sockets([sock])
    yield f"http://localhost:{port}"
    server.stop()


async def test_a_metadata_document_names_the_client_on_the_page(api, documents):
    client_id = f"{documents}/client.json"
    page, csrf, _ = await open_page(api, authorize_query(api, client_id, pkce().challenge))
    assert page.status == 200 and csrf
    assert "<strong>Metadata agent</strong> asks to act for you" in page.body.decode()


@pytest.mark.parametrize("path, problem", [
    ("/to-loopback", "The client metadata document host 127.0.0.1 is not a public address."),
    ("/huge", "The client metadata document is larger than 5120 bytes."),
])
async def test_a_document_that_redirects_to_loopback_or_is_huge_is_refused(api, documents, path, problem):
    page, csrf, _ = await open_page(api, authorize_query(api, f"{documents}{path}", pkce().challenge))
    assert (page.status, csrf) == (400, "") and "Location" not in page.headers
    assert problem in page.body.decode()


@pytest.mark.parametrize("config", [{"oauth": {"private_hosts": []}}], indirect=True)
async def test_without_private_hosts_a_loopback_document_is_refused(api, documents):
    page, _, _ = await open_page(api, authorize_query(api, f"{documents}/client.json", pkce().challenge))
    assert page.status == 400 and "The client metadata document host localhost is not a public address." in page.body.decode()

