"""Prometheus metrics: a request counter and a duration histogram, per door, method, route
template and status, and their exposition at `/metrics`.

`prometheus_client` picks its storage (in memory, or mmap files shared by the processes of
`serve --processes N`) from `PROMETHEUS_MULTIPROC_DIR` when it is first imported, so it is
imported here only when a `Metrics` is built: after `serve` has set that variable and forked.
"""
import os
from collections.abc import Iterator
from typing import Any

from service.config import Settings

LABELS = ("door", "method", "route", "status")
REQUESTS, DURATION = "restify_requests", "restify_request_duration_seconds"  # the counter's samples end in _total
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def enabled(settings: Settings) -> bool:
    return settings.get("metrics", "enabled") is not False


class _WithRequestCounter:
    """Exposes what `source` collects plus `restify_requests_total`, read off the duration
    histogram's `_count` samples: one metric update per request instead of two, and the two can
    never disagree."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        for family in self.source.collect():
            yield family
            if family.name == DURATION:
                requests = CounterMetricFamily(REQUESTS, "HTTP requests answered.", labels=LABELS)
                for sample in family.samples:
                    if sample.name == f"{DURATION}_count":
                        requests.add_metric([sample.labels[label] for label in LABELS], sample.value)
                yield requests


class Metrics:
    """The request metrics of one application (its own registry, so several apps in one
    process, as in the tests, do not collide)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Histogram

        registry = CollectorRegistry()
        self.duration = Histogram(DURATION, "Time to answer an HTTP request.", LABELS, registry=registry)
        self._children: dict[tuple[str, str, str, int], Any] = {}
        source: Any = registry
        if os.environ.get(MULTIPROC_ENV):
            from prometheus_client import multiprocess
            source = multiprocess.MultiProcessCollector(None)  # sums the files of every process
        self._exposed = CollectorRegistry()
        self._exposed.register(_WithRequestCounter(source))

    def observe(self, door: str, method: str, route: str, status: int, seconds: float) -> None:
        # Labelled children are looked up once per label set: `labels()` takes a lock and
        # validates its arguments, which would double the cost of an observation.
        key = (door, method, route, status)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.duration.labels(*key)
        child.observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        """The body and content type of a scrape."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
        return generate_latest(self._exposed), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    """Bookkeeping for a worker of `serve --processes N` that exited (its counters stay counted)."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid)
