"""The credentials this package's HTTP clients were configured with, so that none is written.

A runtime or a decision provider of this package tells :func:`register_client` what it was
built with: its API key, the values of its default headers (but for a few that never carry a
credential: ``Accept``, ``Content-Type``, ``User-Agent``, version headers) and the user info of
its base URL. The cassette layer replaces each of these values, in every encoding, wherever it
would write it (see :mod:`pytest_opdecide._cassettes._scrub`), and messages never show them.

The register lives as long as the process: a key configured in one test is also kept out of
every other test's cassette.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

__all__ = ["PUBLIC_HEADERS", "credential_values", "register", "register_client", "registered"]

PUBLIC_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "content-type", "user-agent"}
)
"""Default headers (lower case) whose values are never credentials; headers whose names end in
``-version`` or ``-beta`` are not either."""

_lock = threading.Lock()
_registered: set[str] = set()
_frozen: frozenset[str] = frozenset()


def register(values: Iterable[object]) -> None:
    """Remember ``values`` as credentials (what is not a non-empty string is ignored)."""
    global _frozen
    new = {value for value in values if isinstance(value, str) and value}
    if new <= _frozen:
        return
    with _lock:
        _registered.update(new)
        _frozen = frozenset(_registered)


def registered() -> frozenset[str]:
    """Every credential registered so far in this process."""
    return _frozen


def _public(header: str) -> bool:
    name = header.lower()
    return name in PUBLIC_HEADERS or name.endswith(("-version", "-beta"))


def credential_values(
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    url: str | None = None,
) -> list[str]:
    """The credentials of a client's configuration: the key, the header values that may carry
    one, and the base URL's user name, password and ``user:password``."""
    values = [api_key or ""]
    values += [str(value) for name, value in (headers or {}).items() if not _public(str(name))]
    if url:
        try:
            parts = urlsplit(url)
            user, password = parts.username, parts.password
        except ValueError:
            user = password = None
        for part in (user, password):
            if part:
                values += [part, unquote(part)]
        if user and password:
            values += [f"{unquote(user)}:{unquote(password)}", f"{user}:{password}"]
    return [value for value in values if value]


def register_client(
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    url: str | None = None,
) -> None:
    """Register a client's credentials (see :func:`credential_values`)."""
    register(credential_values(api_key=api_key, headers=headers, url=url))
