"""The test suite's network jail, loaded into every Python process the suite starts.

Tests of the real-call guard aim requests at non-loopback hosts and expect the guard to stop
them. If the guard ever failed, those requests must still not leave the machine: underneath
the guard, this jail refuses every socket connection and name lookup that is not on the
loopback (or a Unix socket), with an error no test expects. It is installed for the test run
only (tests/conftest.py puts this folder on PYTHONPATH and imports it); the library never
ships it.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


class NetworkJailError(OSError):
    """The test suite tried to reach a non-loopback host (and the guard did not stop it)."""


def _loopback(host: Any) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    text = text.strip("[]").lower()
    if text in _LOOPBACK_NAMES or text.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


def install() -> None:
    if getattr(socket, "__opdecide_jail__", False):
        return
    socket.__opdecide_jail__ = True  # type: ignore[attr-defined]
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if not _loopback(host):
                raise NetworkJailError(f"network jail: the test suite tried to reach {address!r}")

    def connect(sock: socket.socket, address: Any) -> Any:
        check(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> Any:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            try:  # a numeric address resolves without the network: let connect() decide
                ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host))
            except ValueError:
                raise NetworkJailError(
                    f"network jail: the test suite tried to look up {host!r}"
                ) from None
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo


install()
