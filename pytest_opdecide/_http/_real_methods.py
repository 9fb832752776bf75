"""Whether httpx's and httpcore's sending methods are still their own, and who replaced them.

Other HTTP mocks answer requests by replacing sending methods for a while: pytest-httpx replaces
``httpx.HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` while its
``httpx_mock`` fixture is set up; respx (its default ``httpcore`` mocker) replaces the
``handle_request``/``handle_async_request`` methods of httpcore's connection pools, connections
and proxies while a ``respx.mock`` is active. A method is its package's own when its code lives
in that package's files; anything else is a replacement, named by the module that defined it.

Nothing here imports an HTTP stack: a stack not imported yet has been replaced by no one.
"""

from __future__ import annotations

import functools
import os
import sys
from types import ModuleType
from typing import Any

__all__ = ["HTTPCORE_SENDERS", "core_replaced_by", "own_code", "replaced_by"]

HTTPCORE_SENDERS = (
    ("ConnectionPool", "handle_request"),
    ("HTTPConnection", "handle_request"),
    ("AsyncConnectionPool", "handle_async_request"),
    ("AsyncHTTPConnection", "handle_async_request"),
)
"""The httpcore methods a request to a server goes through (class and method names), the ones
respx replaces."""


@functools.cache
def _home(package: ModuleType) -> str:
    return os.path.dirname(os.path.abspath(str(package.__file__))) + os.sep


def own_code(function: Any, package: ModuleType) -> bool:
    """Whether ``function`` is defined in the files of ``package`` (not a replacement)."""
    code = getattr(function, "__code__", None)
    if code is None or getattr(package, "__file__", None) is None:
        return False
    return bool(os.path.abspath(code.co_filename).startswith(_home(package)))


def replaced_by(function: Any) -> str:
    """The module that defined ``function`` (how messages name a replacement)."""
    module = getattr(function, "__module__", None)
    return str(module) if module else type(function).__name__


def core_replaced_by() -> str | None:
    """The module whose function replaces one of httpcore's senders now (``respx.mocks`` while
    a respx mock is active), or ``None`` when they are all httpcore's own."""
    core = sys.modules.get("httpcore")
    if core is None:
        return None
    for owner, method in HTTPCORE_SENDERS:
        function = getattr(getattr(core, owner, None), method, None)
        if function is not None and not own_code(function, core):
            return replaced_by(function)
    return None
