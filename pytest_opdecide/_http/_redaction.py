"""The one list of secret header names, and the one redaction of text before anyone shows it.

**Names.** A header is secret when :data:`SECRET_HEADERS` names it or its name says what it
carries (:data:`SECRET_NAME`: ``key``, ``token``, ``secret``, ``passw``, ``auth``,
``signature``, ``credential``, ``session``, ``cookie``): :func:`secret_header`. A query
parameter is secret by the same words, and ``sig`` and ``code``: :func:`secret_param`.

**Values.** :func:`credential_parts` splits a secret header's value into the credentials
inside it (a bearer token, Basic auth's ``user:password``, a cookie's values...);
:func:`carried_credentials` lists every credential one request carries.

**Text.** :func:`redact_text` is the one redaction: URLs lose their user info, secret query
values and every form of every secret (:class:`~._secrets.Secrets`: raw, URL-encoded,
JSON-escaped, base64...) and key-like text become a placeholder. :class:`MessageRedaction`
applies it to what a server said about one request, for an error message.

Who reads what:

* the runtimes (:mod:`pytest_opdecide.runtimes`) and the question providers
  (:mod:`pytest_opdecide.questions`) pass every text quoted from a server (body, reason phrase,
  headers) and every URL they show through a :class:`MessageRedaction` of the request's
  :func:`carried_credentials`, which show each secret as :data:`MESSAGE_PLACEHOLDER`;
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
from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import parse_qsl, unquote, urlsplit

from pytest_opdecide._http._credentials import credential_values
from pytest_opdecide._http._error_answers import clip, server_message
from pytest_opdecide._http._secrets import PLACEHOLDER, Secrets, worth_searching

__all__ = [
    "MESSAGE_MIN_SECRET_LENGTH",
    "MESSAGE_PLACEHOLDER",
    "SECRET_HEADERS",
    "SECRET_NAME",
    "MessageRedaction",
    "carried_credentials",
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

MESSAGE_PLACEHOLDER = "***"
"""What an error message shows in place of each secret."""

MESSAGE_MIN_SECRET_LENGTH = 4
"""Credentials shorter than this are not hidden from messages: replacing every ``"x"`` would
garble them. From :data:`~._secrets.MIN_SECRET_LENGTH` characters on (with a letter), every
encoding of a credential is hidden too; shorter ones only as written (a base64 piece of a few
characters is found in any text)."""


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


def carried_credentials(
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    url: str | None = None,
    sent: Mapping[str, str] | None = None,
) -> list[str]:
    """Every credential a request carries, for its messages to hide.

    Args:
        api_key: The client's API key.
        headers: The default headers the client was configured with: every value is a
            credential but for a few public ones (see
            :func:`~._credentials.credential_values`).
        url: The base URL (or the request's URL): its user info, and the values of its secret
            query parameters.
        sent: The headers the request went out with (a caller's own client may add some):
            the values of the secret ones (:func:`secret_header`).

    Returns:
        The values, with the credentials inside each secret header's value
        (:func:`credential_parts`).
    """
    values = credential_values(api_key=api_key, headers=headers, url=url)
    for name, value in [*(headers or {}).items(), *(sent or {}).items()]:
        if secret_header(str(name)):
            values += credential_parts(str(name), str(value))
    try:
        query = urlsplit(url or "").query
    except ValueError:
        query = ""
    for name, value in parse_qsl(query, keep_blank_values=True):
        if secret_param(name):
            values += credential_parts(name, value)
    return [value for value in values if value]


# --- text ----------------------------------------------------------------------------------

_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")
_QUERY_PAIR = re.compile(r"([?&;])([^=&;\s#]+)=([^&;\s#\"'<>]*)")


def redact_text(
    text: str, secrets: Secrets | None = None, *, placeholder: str = PLACEHOLDER
) -> str:
    """Free text (a log line, what a server said) as messages show it: URLs without user info,
    secret query values, every form of every known secret (by default
    :meth:`Secrets.current`) and key-like text as the placeholder."""
    text = _USERINFO.sub("", text)
    text = _QUERY_PAIR.sub(
        lambda pair: (
            f"{pair[1]}{pair[2]}={placeholder}"
            if pair[3] and secret_param(unquote(pair[2]))
            else pair[0]
        ),
        text,
    )
    return (Secrets.current() if secrets is None else secrets).text(text, placeholder)


class MessageRedaction:
    """What an error message may show of one request's exchange with a server: the text it
    quotes (body, reason phrase, headers, URLs) through :func:`redact_text`, with every
    credential the request carried as :data:`MESSAGE_PLACEHOLDER`.

    Args:
        credentials: What the request carried (:func:`carried_credentials`); those shorter
            than :data:`MESSAGE_MIN_SECRET_LENGTH` are left out.
    """

    __slots__ = ("_as_written", "_secrets")

    def __init__(self, credentials: Iterable[str] = ()) -> None:
        values = {value for value in credentials if len(value) >= MESSAGE_MIN_SECRET_LENGTH}
        self._secrets = Secrets(values)
        # Too short (or without a letter) to be searched in every encoding: as written only.
        self._as_written = sorted(
            (value for value in values if not worth_searching(value)), key=len, reverse=True
        )

    def __repr__(self) -> str:
        count = len(self._secrets.values) + len(self._as_written)
        return f"MessageRedaction(<{count} credentials>)"  # never the values

    def text(self, text: str) -> str:
        """``text`` with every credential, in every form, and key-like text as ``***``."""
        text = redact_text(text, self._secrets, placeholder=MESSAGE_PLACEHOLDER)
        for value in self._as_written:
            text = text.replace(value, MESSAGE_PLACEHOLDER)
        return text

    def clipped(self, text: str, limit: int) -> str:
        """``text`` redacted, then cut to ``limit`` characters (never the other way round: a
        credential cut in two is no longer found)."""
        return clip(self.text(text), limit)

    def server_message(self, body: str, limit: int) -> str:
        """The reason an error body gives (:func:`~._error_answers.server_message`), redacted,
        cut to ``limit`` characters.

        Redacted before the reason is read (putting it on one line changes the spaces of a
        credential that has some) and after (reading its JSON undoes escapes no form knows).
        """
        return self.clipped(server_message(self.text(body)), limit)
