"""The real-call guard: what a test may not reach, decided before anything is sent.

The guard is one checker of the project's network hooks (:mod:`pytest_opdecide._http._network`,
which the conformance suite's watcher shares). The plugin installs it once per session and sets
its *scope* as each test starts:

- ``"all"``: every HTTP request through a real ``httpx``/``httpx2`` transport and every socket
  connection to a host outside the loopback is refused. Tests that use the plugin get this
  scope (and every test does with the ``guard_all`` setting).
- ``"model_calls"``: only the model calls of this project's own real runtimes and providers
  are refused (they send inside :func:`pytest_opdecide._http._network.model_call`); every other
  connection of the test is left alone. Tests that do not use the plugin get this scope.
- ``"off"``: nothing is refused (the ``guard`` setting is off, or the test records a cassette
  or runs against the live model).

Hosts of the allowlist (:class:`AllowedHosts`, the ``allow_hosts`` setting) and the loopback
always get through. A refused attempt raises :class:`RealCallBlocked`, whose message says how
to proceed.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pytest_opdecide._http import _network as network
from pytest_opdecide._http._network import Attempt
from pytest_opdecide._nextstep._binding import current_agent, current_runtime

__all__ = [
    "AllowedHosts",
    "RealCallBlocked",
    "Scope",
    "guard",
    "is_loopback",
    "parse_allowed_host",
]

Scope = Literal["off", "model_calls", "all"]
"""What the guard refuses during a test (see the module docstring)."""

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
_HOST_NAME = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*")
_IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class RealCallBlocked(RuntimeError):
    """A test tried to reach a host outside the loopback while the guard was on."""

    __module__ = "pytest_opdecide"


def _ip(host: str) -> _IPAddress | None:
    """``host`` as an IP address (IPv4-mapped IPv6 addresses as IPv4), or ``None``."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is on this machine's loopback."""
    name = host.strip("[]").lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    address = _ip(name)
    return address is not None and address.is_loopback


# --- the allowlist -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    name: str | None
    network: _IPNetwork | None
    port: int | None

    def port_matches(self, port: int | None) -> bool:
        return self.port is None or self.port == port


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535, got {text!r}")
    return int(text)


def _split(entry: str) -> tuple[str, int | None]:
    """``entry`` as (host, port): ``host``, ``host:port``, ``[v6]``, ``[v6]:port``, bare IPv6."""
    if entry.startswith("["):
        match = re.fullmatch(r"\[([^\]]+)\](?::(.*))?", entry)
        if match is None:
            raise ValueError(f"{entry!r}: write an IPv6 address with a port as [2001:db8::1]:443")
        host, port = match.group(1), match.group(2)
        return host, None if port is None else _port(port, entry)
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, _port(port, entry)
    return entry, None  # a name, an IPv4 address or network, or a bare IPv6 address or network


def _parse(entry: str) -> _Entry:
    text = entry.strip()
    if not text:
        raise ValueError("an empty host")
    if "://" in text:
        raise ValueError(
            f"{text!r} is a URL: give the host (and port) only, such as db.internal:5432"
        )
    host, port = _split(text)
    if "/" in host:
        try:
            return _Entry(None, ipaddress.ip_network(host), port)
        except ValueError as error:
            try:
                meant = f" (did you mean {ipaddress.ip_network(host, strict=False)}?)"
            except ValueError:
                meant = ""
            raise ValueError(f"{text!r} is not a network: {error}{meant}") from None
    address = _ip(host)
    if address is not None:
        return _Entry(None, ipaddress.ip_network(address), port)
    name = host.lower().rstrip(".")
    if "*" in name:
        raise ValueError(
            f"{text!r}: wildcards are not supported: list each host, or give its network as a "
            "CIDR range such as 10.0.0.0/8"
        )
    if not _HOST_NAME.fullmatch(name):
        raise ValueError(
            f"{text!r} is not a host name, an IP address or a CIDR range (such as "
            "db.internal, db.internal:5432, 10.0.0.7, 10.0.0.0/8 or [2001:db8::1]:443)"
        )
    return _Entry(name, None, port)


def _show(entry: _Entry) -> str:
    if entry.name is not None:
        host = entry.name
    else:
        assert entry.network is not None
        one = entry.network.num_addresses == 1
        host = str(entry.network.network_address) if one else str(entry.network)
        if entry.port is not None and entry.network.version == 6:
            host = f"[{host}]"
    return host if entry.port is None else f"{host}:{entry.port}"


def parse_allowed_host(entry: str) -> str:
    """Check one allowlist entry and return it in its normal form (lower case, no brackets
    without a port).

    Args:
        entry: A host name (``db.internal``), an IP address (``10.0.0.7``, ``2001:db8::1``),
            a CIDR range (``10.0.0.0/8``), each optionally with a port (``db.internal:5432``,
            ``[2001:db8::1]:443``).

    Raises:
        ValueError: The entry is none of these; the message says what to write.
    """
    return _show(_parse(entry))


class AllowedHosts:
    """Hosts a test may reach although they are not on the loopback.

    A host name matches a request to that name, and a connection to an address that the name
    resolves to; an address or a CIDR range matches the addresses it covers, and a request to
    a host name that resolves into it. Names are looked up once, when first needed. An entry
    with a port matches that port only.

    Args:
        entries: Allowlist entries (see :func:`parse_allowed_host`).

    Raises:
        ValueError: An entry is not a host, an address or a range.
    """

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self._entries = tuple(_parse(entry) for entry in entries)
        self._names = tuple(e for e in self._entries if e.name is not None)
        self._networks = tuple(e for e in self._entries if e.network is not None)
        self._resolved: dict[str, frozenset[_IPAddress]] = {}
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __repr__(self) -> str:
        return f"AllowedHosts({[_show(entry) for entry in self._entries]!r})"

    def allows(self, host: str, port: int | None) -> bool:
        """Whether a connection to ``host`` (a name or an address) and ``port`` is allowed.

        A host name not on the list is looked up when a range is: its addresses decide.
        """
        address = _ip(host)
        if address is None:
            name = host.lower().rstrip(".")
            if any(e.name == name and e.port_matches(port) for e in self._names):
                return True
            return any(self._in_ranges(found, port) for found in self._addresses(name))
        if self._in_ranges(address, port):
            return True
        return any(
            address in self._addresses(e.name) and e.port_matches(port)
            for e in self._names
            if e.name is not None
        )

    def _in_ranges(self, address: _IPAddress, port: int | None) -> bool:
        return any(
            address in e.network and e.port_matches(port)
            for e in self._networks
            if e.network is not None and e.network.version == address.version
        )

    def _addresses(self, name: str) -> frozenset[_IPAddress]:
        """The addresses ``name`` resolves to, looked up once (only when a range or a name of
        the list needs it)."""
        if not self._networks and not self._names:
            return frozenset()
        with self._lock:
            known = self._resolved.get(name)
        if known is not None:
            return known
        try:
            found = socket.getaddrinfo(name, None)
        except OSError:  # an unknown name (or a lookup refused): it allows no address
            found = []
        addresses = frozenset(
            address for *_, sockaddr in found if (address := _ip(str(sockaddr[0]))) is not None
        )
        with self._lock:
            self._resolved[name] = addresses
        return addresses


# --- the guard ---------------------------------------------------------------------------------


def _request_target(attempt: Attempt) -> str:
    """The URL of a request without credentials or query: scheme, host, port and path."""
    url = attempt.request.url
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{host}{port}{url.path}"


def _connect_target(attempt: Attempt) -> str:
    host = f"[{attempt.host}]" if ":" in attempt.host else attempt.host
    return f"{host}:{attempt.port if attempt.port is not None else '?'}"


def _configured_agent() -> str | None:
    """The class name of the running Agent method's Agent, when the runtime bound is the one
    that Agent was built with (so a refused model call came from there)."""
    agent = current_agent()
    own = getattr(agent, "runtime", None)
    if own is None:
        return None
    return type(agent).__name__ if current_runtime() is own else None


class _Guard:
    """The process-wide guard; the plugin sets :attr:`scope`, :attr:`test_id` and
    :attr:`allowed` for each test."""

    def __init__(self) -> None:
        self.scope: Scope = "off"
        self.test_id = ""
        self.allowed = AllowedHosts()
        self._installs = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether the guard refuses anything in the running test."""
        return self.scope != "off"

    def message(self, target: str, attempt: Attempt) -> str:
        """The message of :class:`RealCallBlocked` for a refused ``attempt``."""
        where = f" in {self.test_id}" if self.test_id else ""
        lines = [
            f"pytest-opdecide blocked a real call to {target}{where}: tests run offline by "
            "default.",
            "  - script the model with the `runtime` / `decision_provider` fixtures, or",
            "  - record it once: mark the test @pytest.mark.opdecide(cassette=True) and run "
            "pytest --opdecide-record=once, or",
            "  - run it against the live model: --opdecide-live, or",
            "  - allow it for this test: @pytest.mark.opdecide(guard=False) (or "
            "--opdecide-guard=off for the run).",
        ]
        configured = _configured_agent() if attempt.model_call else None
        if configured is not None:
            lines[1:1] = [
                f"  {configured} was built with a runtime of its own (Agent(runtime=...)), and "
                "that runtime made this call:",
                "  - let the test's runtime replace it: the `runtime` fixture or "
                "@pytest.mark.opdecide(script=[...]) with the override_runtimes setting on (the "
                "default), or `with use_runtime(fake, override=True):` around the call, or",
            ]
        if not attempt.model_call:
            host = attempt.host.lower()
            lines[-1] = lines[-1][:-1] + ", or"
            lines.append(
                "  - if this host is not a model server, let it through: "
                f"opdecide_allow_hosts = {host} in the ini file (or --opdecide-allow-hosts={host})."
            )
        return "\n".join(lines)

    def check(self, attempt: Attempt) -> None:
        """Refuse ``attempt`` if the running test's scope and allowlist say so.

        Raises:
            RealCallBlocked: The attempt is refused.
        """
        scope = self.scope
        if attempt.kind == "resolve" or scope == "off":
            return
        if scope == "model_calls" and not attempt.model_call:
            return
        if is_loopback(attempt.host):
            return
        if self.allowed.allows(attempt.host, attempt.port):
            return
        connect = attempt.kind == "connect"
        target = _connect_target(attempt) if connect else _request_target(attempt)
        raise RealCallBlocked(self.message(target, attempt))

    def install(self) -> None:
        """Start checking (nested calls share one registration: a pytest session started
        inside another one, as pytester's in-process runs do)."""
        with self._lock:
            self._installs += 1
            if self._installs == 1:
                network.register(self.check)

    def refresh(self) -> None:
        """Put back hooks that another tool removed, and hook an HTTP stack imported since."""
        if self._installs:
            network.refresh()

    def uninstall(self) -> None:
        """Undo :meth:`install` (the last of nested calls stops the checking)."""
        with self._lock:
            if self._installs == 0:
                return
            self._installs -= 1
            if self._installs == 0:
                network.unregister(self.check)
                self.scope = "off"


guard = _Guard()
"""The process-wide guard (one per process: pytest-xdist workers each have their own)."""
