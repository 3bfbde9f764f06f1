"""What each request leaves behind: a request id (honoured from `X-Request-Id` or made up, and
echoed), one metrics observation and one access line, labelled by door and route template.

Both run in Tornado's `log_function`, once per request. Their cost when the line is filtered
out is a dict lookup, one histogram update and `isEnabledFor` (cached by `logging`): about 1.5 µs.
"""
import itertools
import logging
import os
import re

from tornado.httputil import HTTPServerRequest
from tornado.web import Application, RequestHandler

from service.http.metrics import Metrics

access_log = logging.getLogger("restify.access")

OPS = "ops"               # the door of /healthz, /readyz, /metrics: not counted, successes at DEBUG
UNMATCHED = "unmatched"   # the route of a path no route matches (a 404): never the raw path
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# A client's id is kept when it cannot break a log line or blow up its size.
_SANE_ID = re.compile(r"[A-Za-z0-9._:/+=@-]{1,128}")


class _Ids:
    """Request ids: a random per-process prefix and a counter (cheaper than a uuid4 per request).
    A forked child draws a new prefix, so the workers of `serve --processes N` never collide."""

    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self.prefix = os.urandom(6).hex()
        self.counter = itertools.count(1)

    def new(self) -> str:
        return f"{self.prefix}-{next(self.counter):x}"


_ids = _Ids()


def request_id(request: HTTPServerRequest) -> str:
    """The client's `X-Request-Id` when it is sane (1-128 safe characters), else a new one."""
    sent = request.headers.get("X-Request-Id")
    if sent and _SANE_ID.fullmatch(sent):
        return sent
    return _ids.new()


class Observer:
    """The application's `log_function`: counts the request and writes its access line."""

    def __init__(self, metrics: Metrics | None) -> None:
        self.metrics = metrics
        self.routes: dict[type, str] = {}

    def learn(self, application: Application) -> None:
        """Handler class -> the template its rule is named by (`/api/restify/{resource}/{id}`)."""
        self.routes.update((rule.target, rule.name) for rule in application.wildcard_router.rules if rule.name)

    def __call__(self, handler: RequestHandler) -> None:
        request = handler.request
        status = handler.get_status()
        seconds = request.request_time()
        door = getattr(handler, "door", "rest")
        route = self.routes.get(type(handler), UNMATCHED)
        method = request.method if request.method in METHODS else "OTHER"
        if self.metrics is not None and door != OPS:
            self.metrics.observe(door, method, route, status, seconds)
        if status < 400:
            level = logging.DEBUG if door == OPS else logging.INFO  # probes every few seconds are noise
        else:
            level = logging.WARNING if status < 500 else logging.ERROR
        if not access_log.isEnabledFor(level):
            return
        user = getattr(handler, "user", None)
        fields = {"request_id": getattr(handler, "request_id", None), "door": door, "method": method,
                  "route": route, "status": status, "duration_ms": round(seconds * 1000.0, 2),
                  "user_id": user.id if user is not None else None}
        # Never the raw URI: its query string may carry a token, and templates keep lines comparable.
        access_log.log(level, "%s %s %s %s %d %.2fms user=%s", fields["request_id"], door, method, route,
                       status, fields["duration_ms"], fields["user_id"] or "-", extra={"access": fields})
