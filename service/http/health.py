"""`/healthz`, `/readyz` and `/metrics`: for load balancers, orchestrators and Prometheus.

None of them reads a user token: `/metrics` has its own (`metrics.token`), compared in constant time.
"""
import hmac

from service.core.declarations.app import Restify
from service.core.kernel.errors import NotReady, Unauthenticated
from service.core.kernel.health import Readiness
from service.http.access import OPS
from service.http.base import JsonHandler
from service.http.metrics import Metrics


class OpsHandler(JsonHandler):
    door = OPS
    challenges = True

    async def admit(self) -> None:
        """No bearer token is read as a user here."""



class HealthHandler(OpsHandler):
    """Alive: answers as long as the process serves requests."""

    async def get(self) -> None:
        await self.send_json({"status": "ok"})


class ReadyHandler(OpsHandler):
    """Ready: the database answers (within `service.core.kernel.health.READY_TIMEOUT`)."""

    def initialize(self, app: Restify, readiness: Readiness) -> None:  # type: ignore[override]
        super().initialize(app)
        self.readiness = readiness

    async def get(self) -> None:
        if not await self.readiness.check():
            raise NotReady()
        await self.send_json({"status": "ready"})


class MetricsHandler(OpsHandler):
    def initialize(self, app: Restify, metrics: Metrics) -> None:  # type: ignore[override]
        super().initialize(app)
        self.metrics = metrics

    async def admit(self) -> None:
        expected = self.app.settings.get("metrics", "token")
        if expected:
            scheme, _, sent = self.request.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(sent.strip().encode(), str(expected).encode()):
                raise Unauthenticated()

    async def get(self) -> None:
        body, content_type = self.metrics.exposition()
        self.set_header("Content-Type", content_type)
        await self.send_bytes(body)


def ops_routes(app: Restify, metrics: Metrics | None) -> list[tuple]:
    """Health and readiness always; `/metrics` when metrics are enabled."""
    routes: list[tuple] = [
        ("/healthz", HealthHandler, {"app": app}, "/healthz"),
        ("/readyz", ReadyHandler, {"app": app, "readiness": Readiness(app.db)}, "/readyz"),
    ]
    if metrics is not None:
        routes.append(("/metrics", MetricsHandler, {"app": app, "metrics": metrics}, "/metrics"))
    return routes
