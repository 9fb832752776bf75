"""Exceptions raised by the real runtimes when a model call over HTTP fails.

The tree, drawn once::

    RuntimeError
     └── RuntimeCallError            a model call failed; .method, .path, .status_code
          ├── ResponseStatusError    the server answered with an error status (other codes)
          │    ├── BadRequestError       400, 409, 413, 415, 422: the server refused the request
          │    ├── AuthenticationError   401, 403: missing, wrong or insufficient API key
          │    ├── NotFoundError         404: wrong base_url (or model, on some servers)
          │    ├── RateLimitError        429: too many requests; .retry_after
          │    └── ServerError           5xx: the server failed (also an error event mid-stream)
          ├── CallTimeoutError       the whole call took longer than its time limit
          ├── ConnectionFailedError  could not connect, or the connection broke mid-reply
          └── MalformedResponseError the answer is not a chat completion (not JSON, no choices)

Every message says what happened, which request (method and URL path: never the host's
credentials, never the API key) and how to fix it. Text quoted from the server has the API key
and other secret header values replaced by ``***``.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CallTimeoutError",
    "ConnectionFailedError",
    "MalformedResponseError",
    "NotFoundError",
    "RateLimitError",
    "ResponseStatusError",
    "RuntimeCallError",
    "ServerError",
]


class RuntimeCallError(RuntimeError):
    """A model call over HTTP failed. Base class of every error of the real runtimes.

    Attributes:
        method: The HTTP method of the failed request (``"POST"``).
        path: The URL path of the failed request, e.g. ``"/v1/chat/completions"``.
        status_code: The HTTP status of the answer, or ``None`` when there was none.
    """

    __module__ = "pytest_opdecide.runtimes"

    def __init__(
        self,
        message: str,
        *,
        method: str = "POST",
        path: str = "",
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.method = method
        self.path = path
        self.status_code = status_code

    @property
    def message(self) -> str:
        """The full message (what happened, which request, how to fix it)."""
        return str(self.args[0]) if self.args else ""


class ResponseStatusError(RuntimeCallError):
    """The server answered with an error status.

    Raised as is for codes without a subclass of their own (a redirect, 409, 413...).

    Attributes:
        server_message: The error message the server gave (from an OpenAI-style
            ``{"error": {"message": ...}}`` body, a FastAPI ``{"detail": ...}`` body, or the
            body's first 300 characters), with secrets redacted.
        body: The body's first 2,000 characters, with secrets redacted.
    """

    __module__ = "pytest_opdecide.runtimes"

    def __init__(
        self,
        message: str,
        *,
        method: str = "POST",
        path: str = "",
        status_code: int | None = None,
        server_message: str = "",
        body: str = "",
    ) -> None:
        super().__init__(message, method=method, path=path, status_code=status_code)
        self.server_message = server_message
        self.body = body


class BadRequestError(ResponseStatusError):
    """400, 409, 413, 415 or 422: the server refused the request as sent (model name, messages,
    an extra_body field, a prompt longer than the context window...). The server's reason is in
    the message."""

    __module__ = "pytest_opdecide.runtimes"


class AuthenticationError(ResponseStatusError):
    """401 or 403: the API key is missing, wrong, or lacks access to the model."""

    __module__ = "pytest_opdecide.runtimes"


class NotFoundError(ResponseStatusError):
    """404: nothing at that URL; ``base_url`` is usually missing its ``/v1``."""

    __module__ = "pytest_opdecide.runtimes"


class RateLimitError(ResponseStatusError):
    """429: too many requests or tokens, or the quota is used up.

    Attributes:
        retry_after: Seconds the server asked to wait (``Retry-After`` or ``retry-after-ms``
            header), or ``None`` when it did not say.
    """

    __module__ = "pytest_opdecide.runtimes"

    def __init__(
        self,
        message: str,
        *,
        method: str = "POST",
        path: str = "",
        status_code: int | None = 429,
        server_message: str = "",
        body: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message,
            method=method,
            path=path,
            status_code=status_code,
            server_message=server_message,
            body=body,
        )
        self.retry_after = retry_after


class ServerError(ResponseStatusError):
    """5xx, or an error event in the middle of a streamed reply: the server failed."""

    __module__ = "pytest_opdecide.runtimes"


class CallTimeoutError(RuntimeCallError):
    """The call did not finish within its time limit: ``timeout_s`` bounds the whole call
    (connecting, sending and all of the reply, streamed or not), not each read on its own.

    Attributes:
        timeout_s: The time limit that applied, in seconds (``None``: no limit was set, the
            transport timed out on its own).
        phase: The phase the call was in when the time ran out, named as httpx's timeouts are:
            ``"connect"``, ``"read"`` (waiting for or receiving the reply), ``"write"`` or
            ``"pool"``; ``"total"`` when the transport does not tell (a custom transport's
            reply was still coming in).
    """

    __module__ = "pytest_opdecide.runtimes"

    def __init__(
        self,
        message: str,
        *,
        method: str = "POST",
        path: str = "",
        status_code: int | None = None,
        timeout_s: float | None = None,
        phase: str = "",
    ) -> None:
        super().__init__(message, method=method, path=path, status_code=status_code)
        self.timeout_s = timeout_s
        self.phase = phase


class ConnectionFailedError(RuntimeCallError):
    """Could not connect to the server, or the connection broke before the reply was complete."""

    __module__ = "pytest_opdecide.runtimes"


class MalformedResponseError(RuntimeCallError):
    """The server answered, but not with a chat completion: not JSON, no ``choices``...

    Attributes:
        body: The first 2,000 characters of what came, with secrets redacted.
    """

    __module__ = "pytest_opdecide.runtimes"

    def __init__(
        self,
        message: str,
        *,
        method: str = "POST",
        path: str = "",
        status_code: int | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message, method=method, path=path, status_code=status_code)
        self.body = body
