"""`restify serve`: the web process."""
import asyncio
import logging
import signal

from tornado.httpserver import HTTPServer

from service.config import Settings
from service.console.runtime import build, database_uri
from service.http.app import make_app

log = logging.getLogger("restify")


async def _serve(settings: Settings, uri: str, port: int, host: str) -> None:
    app = build(settings, uri)
    await app.ready()
    server = HTTPServer(make_app(app), xheaders=True, max_body_size=64 * 1024 * 1024)
    server.listen(port, address=host)
    names = ", ".join(sorted(app.registry.resources)) or "none"
    print(f"Restify serving http://{host}:{port} (repositories: {names}; database: {uri})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.stop()
    await server.close_all_connections()
    app.db.close()


def serve(settings: Settings, port: int | None, host: str) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    port = port or int(settings.get("server", "port"))
    with database_uri(settings) as uri:
        asyncio.run(_serve(settings, uri, port, host))
