"""What an HTTP error answer means, read once for both HTTP stacks of the package.

The runtimes (:mod:`pytest_opdecide.runtimes`) raise their error classes and the question
providers (:mod:`pytest_opdecide.questions`) their ``ProviderError`` codes; both read a failed
answer here:

* :func:`status_kind`: what an error status means (the request was refused, the key, the URL,
  the rate, the server...);
* :func:`retry_after_seconds`: how long the server asked to wait (``retry-after-ms``, or
  ``Retry-After`` in seconds or as a date);
* :func:`server_message`: the reason the server gave, from the JSON error bodies servers send
  (OpenAI, FastAPI...) or the body's text.

What the server said may echo a credential: both stacks read it through
:meth:`~._redaction.MessageRedaction.server_message`, which redacts it before and after this
module reads it, and only then clips it.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "StatusKind",
    "clip",
    "retry_after_seconds",
    "server_error_message",
    "server_message",
    "status_kind",
]

StatusKind = Literal[
    "bad_request", "authentication", "not_found", "timeout", "rate_limit", "server", "other"
]
"""What an error status means; each HTTP stack maps it to its own errors."""

_KINDS: dict[int, StatusKind] = {
    400: "bad_request",
    401: "authentication",
    403: "authentication",
    404: "not_found",
    408: "timeout",
    409: "bad_request",
    413: "bad_request",
    415: "bad_request",
    422: "bad_request",
    429: "rate_limit",
}


def status_kind(status: int) -> StatusKind:
    """What an HTTP error status means.

    Args:
        status: A status of 400 or more.

    Returns:
        ``bad_request`` (400, 409, 413, 415, 422: the server refused the request as sent),
        ``authentication`` (401, 403), ``not_found`` (404), ``timeout`` (408),
        ``rate_limit`` (429), ``server`` (5xx) or ``other``.
    """
    kind = _KINDS.get(status)
    if kind is not None:
        return kind
    return "server" if status >= 500 else "other"


def _seconds(text: str) -> float | None:
    """A number of seconds, or ``None`` for text that is not a finite number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """How long the server asked to wait before a retry, in seconds.

    ``retry-after-ms`` (milliseconds) wins over ``Retry-After`` (seconds, or an HTTP date). A
    value that is not a finite number (``inf``, ``nan``, ``soon``) says nothing usable, so the
    next header is read, and then ``None``: an infinite wait would hang whoever honours it. A
    wait in the past, or a negative one, is no wait (``0.0``).

    Args:
        headers: The response's headers (lower-case lookups, as ``httpx.Headers`` does).
        now: The current time (seconds since the epoch), for HTTP dates; the clock's by default.

    Returns:
        Seconds (never negative), or ``None`` when the headers say nothing usable.
    """
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        value = _seconds(milliseconds)
        if value is not None:
            return max(0.0, value / 1000)
    text = headers.get("retry-after")
    if text is None:
        return None
    value = _seconds(text)
    if value is not None:
        return max(0.0, value)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def server_error_message(data: Any) -> str:
    """The human-readable message of a parsed JSON error body, or ``""`` when there is none.

    Understands OpenAI-style ``{"error": {"message": ...}}`` and ``{"error": "..."}``, FastAPI's
    ``{"detail": "..."}`` and ``{"detail": [{"loc": [...], "msg": ...}]}``, and ``{"message"}``.
    """
    if not isinstance(data, Mapping):
        return ""
    error = data.get("error")
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    detail = data.get("detail")
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, Mapping):
                location = ".".join(str(step) for step in item.get("loc", ()))
                text = str(item.get("msg", ""))
                parts.append(f"{location}: {text}" if location else text)
        return "; ".join(parts)
    message = data.get("message")
    return message if isinstance(message, str) else ""


def server_message(text: str) -> str:
    """The reason an error body gives: its JSON error message, else its text on one line.

    Not shortened (see :func:`clip`), and not redacted: read it through
    :meth:`~._redaction.MessageRedaction.server_message`, which knows the request's credentials.
    """
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    return server_error_message(data) or " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with ``...`` when it was longer.

    Cut server text only once it is redacted: the first half of a credential is no longer found.
    """
    return text if len(text) <= limit else text[:limit] + "..."
