"""Log records that would show a credential, while a cassette is open.

Two libraries under the cassette layer log what passes through them, and pytest shows captured
logs in failure reports and junit XML:

* vcrpy logs whole requests and responses (``Appending request ... and response ...``) at debug
  and info level, before anything is scrubbed: while a cassette is open, those records of
  vcrpy's loggers are dropped;
* httpx logs each request's URL at info level (``HTTP Request: POST https://user:key@...``):
  while a cassette is open, such records of the ``httpx`` (and ``httpx2``) loggers are kept with
  their URLs redacted as messages show them
  (:func:`~pytest_opdecide._http._redaction.redact_text`).

Both are standard ``logging.Filter`` objects added to those libraries' loggers (one per module,
named after it, as they create them) the first time a cassette opens; outside a cassette they
change nothing.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import pkgutil
import threading
from collections.abc import Iterator

from pytest_opdecide._http._redaction import redact_text

__all__ = ["credentials_kept_out_of_logs"]

_REDACTED_LOGGERS = ("httpx", "httpx2")


class _WhileOpen(logging.Filter):
    """Counts the cassettes open in this process; does its work only while one is."""

    def __init__(self) -> None:
        super().__init__()
        self.open = 0
        self.lock = threading.Lock()


class _DropBelowWarning(_WhileOpen):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.open and record.levelno < logging.WARNING)


class _Redact(_WhileOpen):
    def filter(self, record: logging.LogRecord) -> bool:
        if self.open:
            message = record.getMessage()
            redacted = redact_text(message)
            if redacted != message:
                record.msg, record.args = redacted, ()
        return True


_DROP = _DropBelowWarning()
_REDACT = _Redact()


def _module_names(path: list[str], prefix: str) -> list[str]:
    """The modules of a package, at any depth, by name (nothing is imported)."""
    names = []
    for info in pkgutil.iter_modules(path, prefix):
        names.append(info.name)
        if info.ispkg:
            inner = [os.path.join(folder, info.name.rpartition(".")[2]) for folder in path]
            names += _module_names(inner, f"{info.name}.")
    return names


@functools.cache
def _install() -> None:
    """Add the filters to the loggers, once."""
    spec = importlib.util.find_spec("vcr")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for name in ["vcr", *_module_names(folders, "vcr.")]:
        logging.getLogger(name).addFilter(_DROP)
    for name in _REDACTED_LOGGERS:
        logging.getLogger(name).addFilter(_REDACT)


@contextlib.contextmanager
def credentials_kept_out_of_logs() -> Iterator[None]:
    """Drop vcrpy's debug and info records and redact httpx's request lines in the block."""
    _install()
    for active in (_DROP, _REDACT):
        with active.lock:
            active.open += 1
    try:
        yield
    finally:
        for active in (_DROP, _REDACT):
            with active.lock:
                active.open -= 1
