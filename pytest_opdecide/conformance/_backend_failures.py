"""The ways the conformance backend fails on purpose, for the checks of provider errors.

Each :class:`BackendFailure` answers a request the way a real backend fails (HTTP 500, 429 with
``Retry-After``, 401, an HTML page instead of JSON, a read timeout, a refused connection) and
says which ``ProviderError`` code the provider must raise for it.
:meth:`~._failure_checks.FailureChecks.test_backend_failures_raise_provider_errors` runs one case
per failure; :meth:`~._identity_checks.IdentityChecks.test_optional_methods` uses the first (HTTP
500) to check that ``get_models()`` returns ``[]`` when listing fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import httpx

from pytest_opdecide.questions import ProviderErrorCode

__all__ = ["BACKEND_FAILURES", "BackendFailure"]


@dataclass(frozen=True)
class BackendFailure:
    """One way the backend fails.

    Attributes:
        id: The case's id in the check's name (``server_error``, ``rate_limit``...).
        what: What the backend does, as failure messages say it (``answers HTTP 500``).
        respond: Answers (or fails) a request the way the backend does.
        code: The ``ProviderError`` code the provider must raise (``None``: any valid code).
        status: The HTTP status ``ProviderError.status_code`` must carry, when set.
    """

    id: str
    what: str
    respond: Callable[[httpx.Request], httpx.Response]
    code: ProviderErrorCode | None
    status: int | None = None


def _error_body(status: int, message: str, kind: str) -> Callable[[httpx.Request], httpx.Response]:
    def respond(request: httpx.Request) -> httpx.Response:
        headers = {"retry-after": "7"} if status == 429 else {}
        return httpx.Response(
            status, json={"error": {"message": message, "type": kind}}, headers=headers
        )

    return respond


def _garbage(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        content=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        headers={"content-type": "text/html"},
    )


def _read_timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("the conformance backend did not answer in time", request=request)


def _connect_error(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("the conformance backend refused the connection", request=request)


BACKEND_FAILURES: Final = (
    BackendFailure(
        "server_error",
        "answers HTTP 500",
        _error_body(500, "The server had an error while processing your request.", "server_error"),
        "server_error",
        500,
    ),
    BackendFailure(
        "rate_limit",
        "answers HTTP 429 with Retry-After: 7",
        _error_body(429, "Rate limit reached for requests.", "rate_limit_exceeded"),
        "rate_limit",
        429,
    ),
    BackendFailure(
        "auth_error",
        "answers HTTP 401",
        _error_body(401, "Incorrect API key provided.", "invalid_request_error"),
        "auth_error",
        401,
    ),
    BackendFailure("garbage", "answers HTTP 200 with an HTML page instead of JSON", _garbage, None),
    BackendFailure(
        "timeout", "does not answer in time (httpx.ReadTimeout)", _read_timeout, "timeout"
    ),
    BackendFailure(
        "unreachable", "cannot be reached (httpx.ConnectError)", _connect_error, "server_error"
    ),
)
