"""The real-call guard: tests run offline unless they say otherwise.

Installed once per session; each test switches it on or off. While on, an HTTP request that
an httpx transport would send to a host outside the loopback range, or any socket connection
to such a host, raises :class:`RealCallBlocked` with a message saying how to record or allow it.

httpx is patched only once something has imported it (:meth:`_Guard.refresh`, called as each
test starts): importing it just for the guard would add it to every pytest start-up (70 ms
and more). A request made through an httpx imported during the test itself is still stopped,
by the socket patch, before it connects.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["RealCallBlocked", "guard"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class RealCallBlocked(RuntimeError):
    """A test tried to reach a real model (a non-loopback host) while the guard was on."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is on this machine's loopback."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Guard:
    def __init__(self) -> None:
        self.active = False
        self.test_id = ""
        self.hint = ""
        self._installs = 0
        self._originals: list[tuple[Any, str, Any]] = []
        self._sock_connect: Callable[[Any], Any] | None = None
        self._lock = threading.Lock()

    def message(self, target: str) -> str:
        where = f" in {self.test_id}" if self.test_id else ""
        return (
            f"pytest-opdecide blocked a real call to {target}{where}: tests run offline by "
            "default.\n"
            "  - script the model with the `runtime` / `decision_provider` fixtures, or\n"
            "  - record it once: mark the test @pytest.mark.opdecide(cassette=True) and run "
            "pytest --opdecide-record=once, or\n"
            "  - run it against the live model: --opdecide-live, or\n"
            "  - allow it for this test: @pytest.mark.opdecide(guard=False) "
            "(or --opdecide-guard=off for the run)." + (f"\n{self.hint}" if self.hint else "")
        )

    def check_url(self, url: Any) -> None:
        if not self.active:
            return
        host = getattr(url, "host", "") or ""
        if not is_loopback(str(host)):
            raise RealCallBlocked(self.message(f"{url}"))

    def check_address(self, family: int, address: Any) -> None:
        if not self.active or family not in (socket.AF_INET, socket.AF_INET6):
            return
        host = address[0] if isinstance(address, tuple) and address else str(address)
        if not is_loopback(str(host)):
            port = address[1] if isinstance(address, tuple) and len(address) > 1 else "?"
            raise RealCallBlocked(self.message(f"{host}:{port}"))

    def install(self) -> None:
        """Patch ``socket.connect`` and httpx's real transports.

        Calls nest: a session started inside another one (pytester's in-process runs) shares
        the patches, and only the last matching :meth:`uninstall` removes them.
        """
        with self._lock:
            self._installs += 1
            if self._installs > 1:
                return
        guard = self

        def sock_connect(original: Any) -> Any:
            def connect(sock: socket.socket, address: Any) -> Any:
                guard.check_address(sock.family, address)
                return original(sock, address)

            return connect

        self._sock_connect = sock_connect
        self.refresh()

    def refresh(self) -> None:
        """Make sure the patches are in place; called as each test starts (cheap when they are).

        Other tools patch ``socket.connect`` too, and restoring what *they* saw can silently
        drop our patch: it is put back when it is missing. httpx's transports are patched once
        httpx has been imported, and again for a new ``httpx`` module object (pytester's
        in-process runs drop the modules they imported).
        """
        if not self._installs:
            return
        for name in ("connect", "connect_ex"):
            current = getattr(socket.socket, name)
            if self._sock_connect and not getattr(current, "__opdecide_guard__", False):
                self._patch(socket.socket, name, self._sock_connect)
        httpx = sys.modules.get("httpx")
        if httpx is None:
            return
        guard = self

        def sync_send(original: Any) -> Any:
            def handle_request(transport: Any, request: Any) -> Any:
                guard.check_url(request.url)
                return original(transport, request)

            return handle_request

        def async_send(original: Any) -> Any:
            async def handle_async_request(transport: Any, request: Any) -> Any:
                guard.check_url(request.url)
                return await original(transport, request)

            return handle_async_request

        for owner, name, make in (
            (getattr(httpx, "HTTPTransport", None), "handle_request", sync_send),
            (getattr(httpx, "AsyncHTTPTransport", None), "handle_async_request", async_send),
        ):
            if owner is None:
                continue
            with self._lock:
                if not getattr(getattr(owner, name), "__opdecide_guard__", False):
                    self._patch(owner, name, make)

    def _patch(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, name)
        self._originals.append((owner, name, original))
        patched = make(original)
        patched.__opdecide_guard__ = True
        setattr(owner, name, patched)

    def uninstall(self) -> None:
        """Undo :meth:`install` (the last of nested calls removes the patches)."""
        with self._lock:
            if self._installs == 0:
                return
            self._installs -= 1
            if self._installs:
                return
            for owner, name, original in reversed(self._originals):
                setattr(owner, name, original)
            self._originals.clear()
            self.active = False


guard = _Guard()
"""The process-wide guard (one per process: pytest-xdist workers each have their own)."""
