"""HTTP failures as the runtime error tree: status codes, httpx exceptions, odd bodies.

Every message names the request by method and URL path (the host only for connection
problems, never credentials) and says how to fix it. Whatever the server said (its body, its
reason phrase, a header) passes through the request's
:class:`~pytest_opdecide._http._redaction.MessageRedaction` first (:meth:`Where.redact`): every
credential the request carried, in every form, shows as ``***``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx

from pytest_opdecide._http._error_answers import retry_after_seconds, status_kind
from pytest_opdecide._http._foreign_mocks import interceptor
from pytest_opdecide._http._redaction import MessageRedaction
from pytest_opdecide.runtimes._protocol import ProtocolProblem
from pytest_opdecide.runtimes._runtime_errors import (
    AuthenticationError,
    BadRequestError,
    CallTimeoutError,
    ConnectionFailedError,
    MalformedResponseError,
    NotFoundError,
    RateLimitError,
    ResponseStatusError,
    RuntimeCallError,
    ServerError,
)

__all__ = [
    "Where",
    "error_for_problem",
    "error_for_status",
    "error_for_timeout",
    "error_for_transport",
]

_BODY_LIMIT = 2000
_MESSAGE_LIMIT = 300


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


class Where:
    """Which request failed, as shown in messages: method, URL path, origin, secrets to hide.

    Args:
        url: The request's URL.
        secrets: Values never to show: every credential the request carries
            (:func:`~pytest_opdecide._http._redaction.carried_credentials`).
        key_sent: An ``Authorization`` header was sent.
        method: The HTTP method.
    """

    def __init__(
        self, url: httpx.URL, secrets: Iterable[str], *, key_sent: bool, method: str = "POST"
    ) -> None:
        self.method = method
        self.path = url.path
        port = f":{url.port}" if url.port is not None else ""
        host = f"[{url.host}]" if ":" in url.host else url.host
        # Scheme, host and port only: user info in a URL is a credential.
        self.origin = f"{url.scheme}://{host}{port}"
        self.redaction = MessageRedaction(secrets)
        self.key_sent = key_sent

    @property
    def request(self) -> str:
        """``"POST /v1/chat/completions"``."""
        return f"{self.method} {self.path}"

    def redact(self, text: str) -> str:
        """``text`` with the secrets, in every form, and key-like text as ``***``."""
        return self.redaction.text(text)


def _status_fix(status: int, where: Where, retry_after: float | None, headers: Any) -> str:
    if status in (401, 403):
        if not where.key_sent:
            return (
                "No API key was sent: pass api_key=... to OpenAICompatibleRuntime (it is sent "
                "as 'Authorization: Bearer ...'), or default_headers= for another header."
            )
        if status == 403:
            return "The key was accepted but may not do this: check its permissions for the model."
        return "The server refused the API key: check the api_key= you passed."
    if status == 404:
        return (
            "Check base_url: it must be the API root under which chat/completions is served, "
            "usually ending with /v1 (e.g. http://127.0.0.1:8765/v1); some servers also answer "
            "404 for an unknown model name."
        )
    if status == 429:
        wait = (
            f"wait {retry_after:g} s (the server's Retry-After) and retry"
            if retry_after is not None
            else "wait and retry"
        )
        return f"Too many requests or tokens, or the quota is used up: {wait}, or lower the rate."
    if status == 422:
        return (
            "The request body failed the server's validation: check model=, the messages and "
            "any extra_body fields against what this server accepts."
        )
    if status == 400:
        return (
            "The server rejected the request: check model=, response_format, the prompt's "
            "length against the context window, and any extra_body fields."
        )
    if status >= 500:
        return "The model server failed: retry, or look at the server's log for the cause."
    if 300 <= status < 400:
        try:
            target = where.redact(httpx.URL(headers.get("location", "")).path)
        except httpx.InvalidURL:
            target = ""
        shown = f" to {target}" if target else ""
        return f"The server redirects{shown}: point base_url at the final URL."
    return "Check base_url, model= and the request options against the server's documentation."


def error_for_status(response: httpx.Response, where: Where) -> ResponseStatusError:
    """The error for a response with a non-2xx status (its body must have been read)."""
    status = response.status_code
    kind = status_kind(status)
    text = response.text
    said_by_server = where.redaction.server_message(text, _MESSAGE_LIMIT)
    body = where.redaction.clipped(text, _BODY_LIMIT)
    reason = f" {where.redact(response.reason_phrase)}" if response.reason_phrase else ""
    said = f": {_sentence(said_by_server)}" if said_by_server else " (the body gives no reason)."
    retry_after = retry_after_seconds(response.headers) if kind == "rate_limit" else None
    message = (
        f"{where.request} failed with {status}{reason}{said} "
        f"{_status_fix(status, where, retry_after, response.headers)}"
    )
    common: dict[str, Any] = {
        "method": where.method,
        "path": where.path,
        "status_code": status,
        "server_message": said_by_server,
        "body": body,
    }
    if kind == "rate_limit":
        return RateLimitError(message, retry_after=retry_after, **common)
    errors: dict[str, type[ResponseStatusError]] = {
        "bad_request": BadRequestError,
        "authentication": AuthenticationError,
        "not_found": NotFoundError,
        "server": ServerError,
    }
    return errors.get(kind, ResponseStatusError)(message, **common)


_TIMEOUT_PHASES: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connect"),
    (httpx.ReadTimeout, "read"),
    (httpx.WriteTimeout, "write"),
    (httpx.PoolTimeout, "pool"),
)


_PHASE_WORDS = {
    "connect": "while connecting",
    "write": "while sending the request",
    "pool": "while waiting for a free connection",
    "read": "while waiting for or receiving the reply",
    "total": "while the reply was still coming in",
}


def error_for_timeout(where: Where, timeout_s: float | None, phase: str) -> CallTimeoutError:
    """The error for a call that ran out of time.

    Args:
        where: The request.
        timeout_s: The call's time limit (``None``: none was set, the transport timed out on
            its own).
        phase: The phase the call was in when its time ran out, named as httpx's timeouts
            are (``"connect"``, ``"read"``, ``"write"``, ``"pool"``); ``"total"`` when the
            transport does not say (the reply was coming in), ``""`` when unknown.
    """
    words = _PHASE_WORDS.get(phase, "")
    if timeout_s is None:
        said = f"timed out ({phase or 'transport'} timeout; no time limit was set)."
    else:
        during = f" ({words})" if words else ""
        said = (
            f"timed out: the whole call took longer than {timeout_s:g} s{during}. timeout_s "
            "bounds the whole call: connecting, sending and all of the reply, streamed or not."
        )
    if phase == "connect":
        fix = f"Check that the server at {where.origin} is up and reachable."
    else:
        fix = (
            "The model took too long: raise timeout_s (OpenAICompatibleRuntime(timeout_s=...) "
            "or exec(..., timeout_s=...)), ask for a shorter reply, or check that the server "
            "is not overloaded."
        )
    return CallTimeoutError(
        f"{where.request} to {where.origin} {said} {fix}",
        method=where.method,
        path=where.path,
        timeout_s=timeout_s,
        phase=phase,
    )


def error_for_transport(
    error: httpx.HTTPError, where: Where, timeout_s: float | None
) -> RuntimeCallError:
    """The error for an httpx exception raised while sending or receiving."""
    detail = where.redact(str(error)) or type(error).__name__
    foreign = interceptor(error)
    if foreign is not None:  # e.g. pytest-httpx answers an unmatched request with a timeout
        name, fix = foreign
        return RuntimeCallError(
            f"{where.request} to {where.origin} was answered by {name}, not by the model "
            f"server: nothing timed out or failed on the way to the model. {name} intercepts "
            f"the test's httpx requests and said: {detail}\nTo fix it, {fix}.",
            method=where.method,
            path=where.path,
        )
    if isinstance(error, httpx.TimeoutException):
        phase = next((name for kind, name in _TIMEOUT_PHASES if isinstance(error, kind)), "")
        return error_for_timeout(where, timeout_s, phase)
    if isinstance(error, httpx.ConnectError):
        return ConnectionFailedError(
            f"{where.request}: could not connect to {where.origin} ({detail}). Is the server "
            "running, and is base_url right?",
            method=where.method,
            path=where.path,
        )
    if isinstance(error, httpx.TransportError):
        return ConnectionFailedError(
            f"{where.request}: the connection to {where.origin} failed before the reply was "
            f"complete ({type(error).__name__}: {detail}). The server may have crashed or closed "
            "the connection: check its log and retry.",
            method=where.method,
            path=where.path,
        )
    if isinstance(error, httpx.DecodingError):
        return MalformedResponseError(
            f"{where.request}: the reply body could not be decoded ({detail}). Check that "
            "base_url points at an OpenAI-compatible server.",
            method=where.method,
            path=where.path,
        )
    return RuntimeCallError(
        f"{where.request} failed ({type(error).__name__}: {detail}). Check base_url and the "
        "transport.",
        method=where.method,
        path=where.path,
    )


def error_for_problem(
    problem: ProtocolProblem, where: Where, status_code: int | None
) -> RuntimeCallError:
    """The error for a 2xx answer that is not a chat completion."""
    description = where.redact(problem.description)
    body = problem.body
    if problem.server_error:
        return ServerError(
            f"{where.request} answered {status_code}, but {description}. The model server "
            "failed: retry, or look at the server's log for the cause.",
            method=where.method,
            path=where.path,
            status_code=status_code,
            server_message=where.redaction.clipped(description, _MESSAGE_LIMIT),
            body=where.redaction.clipped(body, _BODY_LIMIT),
        )
    fix = problem.fix or (
        "Check that base_url points at an OpenAI-compatible chat-completions API (it usually "
        "ends with /v1)."
    )
    return MalformedResponseError(
        f"{where.request} answered {status_code}, but {description}. {fix}",
        method=where.method,
        path=where.path,
        status_code=status_code,
        body=where.redaction.clipped(body, _BODY_LIMIT),
    )
