"""Prometheus metrics: a request counter and a duration histogram, per door, method, route
template and status, and their exposition at `/metrics`.

`prometheus_client` picks its storage (in memory, or mmap files shared by the processes of
`serve --processes N`) from `PROMETHEUS_MULTIPROC_DIR` when it is first imported, so it is
imported here only when a `Metrics` is built: after `serve` has set that variable and forked.
"""
import os
from typing import Any

from service.config import Settings

LABELS = ("door", "method", "route", "status")
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def enabled(settings: Settings) -> bool:
    return settings.get("metrics", "enabled") is not False


class Metrics:
    """The request metrics of one application (its own registry, so several apps in one
    process, as in the tests, do not collide)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter("restify_requests_total", "HTTP requests answered.", LABELS,
                                registry=self.registry)
        self.duration = Histogram("restify_request_duration_seconds", "Time to answer an HTTP request.",
                                  LABELS, registry=self.registry)
        self._children: dict[tuple[str, str, str, int], tuple[Any, Any]] = {}
        self._exposed = self.registry
        if os.environ.get(MULTIPROC_ENV):
            from prometheus_client import multiprocess
            self._exposed = CollectorRegistry()
            multiprocess.MultiProcessCollector(self._exposed)  # sums the files of every process

    def observe(self, door: str, method: str, route: str, status: int, seconds: float) -> None:
        # Labelled children are looked up once per label set: `labels()` takes a lock and
        # validates its arguments, which would double the cost of an observation.
        key = (door, method, route, status)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.requests.labels(*key), self.duration.labels(*key))
        children[0].inc()
        children[1].observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        """The body and content type of a scrape."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
        return generate_latest(self._exposed), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    """Bookkeeping for a worker of `serve --processes N` that exited (its counters stay counted)."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid)
