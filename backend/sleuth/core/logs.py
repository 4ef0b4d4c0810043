"""JSON-lines logs under `data_dir/logs`, rotated by concurrent-log-handler (safe with several workers).

One line per HTTP request (`sleuth.api.access`, written by `api.logs`), per run event
(`sleuth.api.runs`) and per administrator's read of another user's research (`sleuth.audit`), from
the server and from `sleuth worker` alike. Nothing
secret is ever written: headers are not logged at all, and query parameters whose names look
like credentials are replaced by "[redacted]".
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from concurrent_log_handler import ConcurrentRotatingFileHandler

from sleuth.core.redaction import redact_fields

access_log = logging.getLogger("sleuth.api.access")
run_log = logging.getLogger("sleuth.api.runs")
audit_log = logging.getLogger("sleuth.audit")
_LOGGERS = (access_log, run_log, audit_log)

_handlers: dict[Path, logging.Handler] = {}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(redact_fields(fields))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def setup_logging(data_dir: Path) -> Path:
    """Attach the JSON file handler once per log file (create_app may run many times in tests)."""
    log_dir = Path(data_dir) / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    path = (log_dir / "sleuth.jsonl").resolve()
    for logger in _LOGGERS:
        logger.setLevel(logging.INFO)
        logger.propagate = False
    if path not in _handlers:
        handler = ConcurrentRotatingFileHandler(str(path), maxBytes=20 * 1024 * 1024, backupCount=5, encoding="utf-8")
        handler.setFormatter(JsonFormatter())
        _handlers[path] = handler
        for logger in _LOGGERS:
            logger.addHandler(handler)
    return path


def close_logging(data_dir: Path) -> None:
    path = (Path(data_dir) / "logs" / "sleuth.jsonl").resolve()
    handler = _handlers.pop(path, None)
    if handler is not None:
        for logger in _LOGGERS:
            logger.removeHandler(handler)
        handler.close()


def log_run_event(event: str, run_id: str, **fields: Any) -> None:
    run_log.info(event, extra={"fields": {"run_id": run_id, **fields}})
