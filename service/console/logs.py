"""Logging for `restify serve`: text or JSON lines on stderr, access lines as configured, and
dependencies kept quiet at INFO (the `mcp` SDK would log a line for every MCP request)."""
import json
import logging
from datetime import datetime, timezone
from typing import Any

from service.config import Settings

FORMATS = ("text", "json")
# `log.access` -> the level of the `restify.access` logger: successes are INFO, 4xx WARNING, 5xx ERROR.
ACCESS_LEVELS = {"all": logging.INFO, "errors": logging.WARNING, "none": logging.CRITICAL + 1}
QUIET = ("mcp", "httpx", "sse_starlette")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per line; an access line carries its fields (request_id, door, ...) as keys."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
        }
        line.update(getattr(record, "access", None) or {})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure(settings: Settings, log_format: str | None = None) -> None:
    """`log_format` (from `--log-format`) wins over the `log.format` setting."""
    chosen = log_format or settings.value("log", "format")
    access = settings.value("log", "access")
    if chosen not in FORMATS:
        raise ValueError(f"log.format must be one of {', '.join(FORMATS)}, not {chosen!r}")
    if access not in ACCESS_LEVELS:
        raise ValueError(f"log.access must be one of {', '.join(ACCESS_LEVELS)}, not {access!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if chosen == "json" else logging.Formatter(TEXT))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    logging.getLogger("restify.access").setLevel(ACCESS_LEVELS[access])
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
