"""The one list of secret header names, and the one redaction of text before anyone shows it.

**Names.** A header is secret when :data:`SECRET_HEADERS` names it or its name says what it
carries (:data:`SECRET_NAME`: ``key``, ``token``, ``secret``, ``passw``, ``auth``,
``signature``, ``credential``, ``session``, ``cookie``): :func:`secret_header`. A query
parameter is secret by the same words, and ``sig`` and ``code``: :func:`secret_param`.

**Values.** :func:`credential_parts` splits a secret header's value into the credentials
inside it (a bearer token, Basic auth's ``user:password``, a cookie's values...).

**Text.** :func:`redact_text` is the one redaction: URLs lose their user info, secret query
values and every form of every secret (:class:`~._secrets.Secrets`: raw, URL-encoded,
JSON-escaped, base64...) and key-like text become a placeholder.

Who reads what:

* the cassette scrubber (:mod:`pytest_opdecide._cassettes._scrub`) replaces the values of the
  headers and query parameters these names mark, and every part of them, in what it writes;
* the log filters (:mod:`pytest_opdecide._cassettes._log_filters`) pass httpx's request lines
  through :func:`redact_text`.

A new secret header name goes into :data:`SECRET_HEADERS` (or a new word into
:data:`SECRET_NAME`); a new form of a value into :mod:`._secrets`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote

from pytest_opdecide._http._secrets import PLACEHOLDER, Secrets

__all__ = [
    "SECRET_HEADERS",
    "SECRET_NAME",
    "credential_parts",
    "redact_text",
    "secret_header",
    "secret_param",
]

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "api-key",  # Azure OpenAI
        "x-api-key",  # Anthropic, many gateways
        "ocp-apim-subscription-key",  # Azure API Management
        "x-functions-key",  # Azure Functions
        "x-goog-api-key",  # Google
        "x-amz-security-token",  # AWS
    }
)
"""Credential headers (lower case) of the vendors this package talks to; :data:`SECRET_NAME`
marks them all too, and more (``x-session-token``, ``X-Custom-Auth-Token``...)."""

SECRET_NAME = re.compile(
    r"key|token|secret|passw|auth|signature|credential|session|cookie", re.IGNORECASE
)
"""The words that make a header's or a query parameter's name secret, in any case."""

_SECRET_PARAMS = frozenset({"sig", "code"})
"""Query parameters secret by their whole name (Azure SAS signatures, Azure Functions keys)."""

# --- names ---------------------------------------------------------------------------------


def secret_header(name: str) -> bool:
    """Whether a header's value is a secret, by its name (in any case)."""
    return name.lower() in SECRET_HEADERS or bool(SECRET_NAME.search(name))


def secret_param(name: str) -> bool:
    """Whether a query (or credential) parameter's value is a secret, by its name."""
    return name.lower() in _SECRET_PARAMS or bool(SECRET_NAME.search(name))


# --- values --------------------------------------------------------------------------------


def credential_parts(name: str, value: str) -> Iterator[str]:
    """The credentials in a secret header's (or parameter's) value: the value, and the ones
    inside it (a bearer token, Basic auth's ``user:password`` and its halves, a cookie's
    values, SigV4's access key id and signature)."""
    yield value
    lowered = name.lower()
    if lowered in ("cookie", "set-cookie"):
        pairs = value.split(";")[:1] if lowered == "set-cookie" else value.split(";")
        for pair in pairs:
            yield pair.strip().partition("=")[2]
        return
    scheme, _, rest = value.strip().partition(" ")
    if not rest:
        return
    rest = rest.strip()
    yield rest
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(rest, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return
        user, _, password = decoded.partition(":")
        yield from (decoded, user, password)
        return
    for piece in rest.split(","):
        key, equals, item = piece.strip().partition("=")
        if equals and secret_param(key):
            yield item
            yield item.split("/")[0]


# --- text ----------------------------------------------------------------------------------

_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")
_QUERY_PAIR = re.compile(r"([?&;])([^=&;\s#]+)=([^&;\s#\"'<>]*)")


def redact_text(text: str, secrets: Secrets | None = None) -> str:
    """Free text (a log line) as messages show it: URLs without user info, secret query
    values, every form of every known secret (by default :meth:`Secrets.current`) and key-like
    text as the placeholder."""
    text = _USERINFO.sub("", text)
    text = _QUERY_PAIR.sub(
        lambda pair: (
            f"{pair[1]}{pair[2]}={PLACEHOLDER}"
            if pair[3] and secret_param(unquote(pair[2]))
            else pair[0]
        ),
        text,
    )
    return (Secrets.current() if secrets is None else secrets).text(text)
