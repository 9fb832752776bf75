"""Scrubbing: no credential reaches a cassette, and replay still matches the scrubbed file.

Before an interaction is written, :class:`Scrubber` replaces secrets with :data:`PLACEHOLDER`:

* headers: the values of credential headers (:data:`SECRET_HEADERS`) and of any header whose
  name says key, token, secret, password, auth, signature or session;
* the query string: the values of parameters with such names (and ``key``, ``sig``, ``code``);
* JSON bodies: the values of the configured body fields (:data:`DEFAULT_BODY_FIELDS` and the
  project's ``scrub_fields``), at any depth;
* and, once the cassette is serialised, the text is searched once more for every value replaced
  above and for key-like text (``sk-...``, ``Bearer ...``): a server that echoes a key back
  cannot slip it past (:meth:`Scrubber.text`).

Transport noise (:data:`NOISE_HEADERS`: dates, lengths, client versions) is dropped too.

Replay compares a request with the recorded ones *as they are stored*: :func:`as_stored` turns
a request's JSON body into its scrubbed form (cheaply, copying only what changes), and
:func:`scrubbed_query` its query string, so a request carrying the real secret still matches the
recording that holds the placeholder.

The seam for new rules: a rule that finds secrets adds to :meth:`Scrubber.interaction` (what is
written) and, when it changes what a request looks like, to :func:`as_stored` and
:func:`scrubbed_query` (what is compared), and remembers each value it replaces with
:meth:`Scrubber.remember` so that the text net catches every other copy of it.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pytest_opdecide._cassette_yaml import body_text

__all__ = [
    "DEFAULT_BODY_FIELDS",
    "NOISE_HEADERS",
    "PLACEHOLDER",
    "SECRET_HEADERS",
    "Scrubber",
    "as_stored",
    "scrubbed_query",
    "shown_uri",
]

PLACEHOLDER = "<REDACTED>"
"""What a cassette holds in place of each secret."""
SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
"""Header names (lower case) whose values are always scrubbed."""
_SECRET_NAME = re.compile(
    r"(api[-_]?key|token|secret|password|passwd|auth|signature|session)", re.I
)
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,})")
DEFAULT_BODY_FIELDS = ("api_key", "apiKey", "access_token", "password", "secret")
"""JSON body fields scrubbed in every cassette (configured ``scrub_fields`` add to them)."""
NOISE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "date",
        "host",
        "keep-alive",
        "server",
        "transfer-encoding",
        "user-agent",
    }
)
"""Transport details left out of cassettes: they change with the client's version or the clock,
make every re-recording a noisy diff, and replay needs none of them."""

_MIN_REMEMBERED = 6
"""Shorter values are not searched for in the text: replacing every ``"abc"`` would garble it."""


def _secret_param(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) or name.lower() in {"key", "sig", "code"}


def _secret_header(name: str) -> bool:
    return name.lower() in SECRET_HEADERS or bool(_SECRET_NAME.search(name))


class Scrubber:
    """Replaces secrets with :data:`PLACEHOLDER` and remembers every value it replaced.

    One scrubber serves one cassette: what it replaced in one interaction is searched for in the
    whole serialised text (:meth:`text`).

    Args:
        body_fields: The JSON body fields to scrub, at any depth.
    """

    def __init__(self, body_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS) -> None:
        self.body_fields = frozenset(body_fields)
        self.seen: set[str] = set()
        """Every secret value replaced so far (searched for again by :meth:`text`)."""

    def remember(self, value: Any) -> None:
        """Search the serialised text for ``value`` too (with and without a ``Bearer``)."""
        text = str(value)
        if len(text) >= _MIN_REMEMBERED and text != PLACEHOLDER:
            self.seen.add(text)
            if text.lower().startswith("bearer "):
                self.seen.add(text[7:].strip())

    def interaction(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Scrub one interaction in place, as it is about to be written.

        ``request`` has ``uri``, ``headers`` (name to a list of values) and ``body`` (the raw
        text or bytes); ``response`` has ``headers`` and ``body: {"string": ...}``.
        """
        self.headers(request.setdefault("headers", {}))
        self.drop_noise(request["headers"])
        request["uri"] = self.uri(str(request.get("uri", "")))
        request["body"] = self.body(request.get("body"))
        self.headers(response.setdefault("headers", {}))
        self.drop_noise(response["headers"])
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = self.body(body["string"])

    def headers(self, headers: Any) -> None:
        """Replace the values of secret headers, in place (values may be lists)."""
        for name in list(headers.keys()):
            if _secret_header(name):
                value = headers[name]
                for v in value if isinstance(value, list) else [value]:
                    self.remember(v)
                headers[name] = [PLACEHOLDER] if isinstance(value, list) else PLACEHOLDER

    @staticmethod
    def drop_noise(headers: Any) -> None:
        """Remove the transport headers of :data:`NOISE_HEADERS`, in place."""
        for name in list(headers.keys()):
            if name.lower() in NOISE_HEADERS:
                del headers[name]

    def query_pairs(self, query: str) -> list[tuple[str, str]]:
        """The query's parameters with key-like values replaced by the placeholder."""
        pairs = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            if _secret_param(key):
                self.remember(value)
                value = PLACEHOLDER
            pairs.append((key, value))
        return pairs

    def uri(self, uri: str) -> str:
        """``uri`` with the values of key-like query parameters replaced."""
        parts = urlsplit(uri)
        if not parts.query:
            return uri
        query = urlencode(self.query_pairs(parts.query), safe="<>")  # a readable placeholder
        return urlunsplit(parts._replace(query=query))

    def json_value(self, value: Any) -> Any:
        """A JSON value with the configured body fields replaced, at any depth."""
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key in self.body_fields and item not in (None, ""):
                    self.remember(item)
                    out[key] = PLACEHOLDER
                else:
                    out[key] = self.json_value(item)
            return out
        if isinstance(value, list):
            return [self.json_value(v) for v in value]
        return value

    def body(self, body: Any) -> Any:
        """A JSON body (text or bytes) with the configured fields replaced; others as they are."""
        text = body_text(body)
        if text is None or text[:1] not in "{[":
            return body
        try:
            parsed = json.loads(text)
        except ValueError:
            return body
        scrubbed = self.json_value(parsed)
        if scrubbed == parsed:
            return body
        out = json.dumps(scrubbed, ensure_ascii=False)
        return out.encode() if isinstance(body, bytes) else out

    def text(self, text: str) -> str:
        """The safety net over the serialised cassette: every remembered value and any
        key-like text replaced."""
        for secret in sorted(self.seen, key=len, reverse=True):
            text = text.replace(secret, PLACEHOLDER)
        return _KEYLIKE.sub(PLACEHOLDER, text)


def scrubbed_query(query: str) -> list[tuple[str, str]]:
    """A query string's parameters as a cassette stores them (key-like values replaced)."""
    return Scrubber().query_pairs(query)


def shown_uri(uri: str) -> str:
    """A URI as messages show it: key-like query values redacted."""
    return Scrubber().uri(uri)


def as_stored(value: Any, fields: frozenset[str]) -> Any:
    """A request's JSON value (or text) as a cassette stores it: the scrubbed fields and
    key-like text as the placeholder. Copy on write: a value with nothing to scrub comes back as
    it is (the very object)."""
    if isinstance(value, str):
        if "sk-" in value or "Bearer" in value:  # cheap test before the expression
            return _KEYLIKE.sub(PLACEHOLDER, value)
        return value
    if isinstance(value, dict):
        out = None
        for key, item in value.items():
            if key in fields and item not in (None, ""):
                new = PLACEHOLDER
            else:
                new = as_stored(item, fields)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items = [as_stored(item, fields) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value
