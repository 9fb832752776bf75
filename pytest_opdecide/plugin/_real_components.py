"""Real components for cassette and live tests: built from hooks or from the settings."""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pytest_opdecide._nextstep._adapter import as_runtime
from pytest_opdecide._nextstep._runtime import Runtime
from pytest_opdecide.plugin._cassette_fixtures import cassette_for
from pytest_opdecide.plugin._settings import Settings
from pytest_opdecide.questions import OpenAICompatibleDecisionProvider
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

__all__ = ["default_runtime", "real_decision_provider", "real_runtime"]

_cassette_key = pytest.StashKey[contextlib.ExitStack]()
"""The open cassette of a test, shared by its ``runtime`` and ``decision_provider``."""


def _runtime_from_hook(request: pytest.FixtureRequest, settings: Settings) -> Runtime:
    supplied = request.config.hook.pytest_opdecide_runtime(request=request, settings=settings)
    if supplied is not None:
        try:
            return as_runtime(supplied, where="pytest_opdecide_runtime returned")
        except TypeError as exc:
            pytest.fail(str(exc), pytrace=False)
    return default_runtime(
        settings.base_url or "", settings.model, structured_decisions=settings.structured_decisions
    )


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def default_runtime(
    base_url: str, model: str | None, *, structured_decisions: Any = "auto"
) -> Runtime:
    """The runtime a cassette or live test gets when no hook supplies one.

    An ``OpenAICompatibleRuntime`` whose transports share one SSL context: httpx builds a new
    one for every client (it loads the CA bundle, tens of milliseconds), which every test would
    pay again, for a cassette test that never opens a connection too.
    """
    context = _ssl_context()
    return OpenAICompatibleRuntime(
        base_url,
        model=model,
        transport=httpx.HTTPTransport(verify=context),
        async_transport=httpx.AsyncHTTPTransport(verify=context),
        structured_decisions=structured_decisions,
    )


def _closable(runtime: Runtime) -> bool:
    """Whether the fixture closes the runtime's connections after the test.

    An ``OpenAICompatibleRuntime`` stays usable after ``close()`` (a later call opens a new
    client), so one supplied by the hook, even shared between tests, is closed too.
    """
    return isinstance(runtime, OpenAICompatibleRuntime)


def _use_cassette(request: pytest.FixtureRequest, settings: Settings, mode: str) -> None:
    """Wire the test's HTTP requests to its cassette, once per test.

    The ``runtime`` and ``decision_provider`` fixtures of one test share one cassette: two
    cassettes on one file would each record half of the requests and overwrite each other.
    """
    node = request.node
    if mode == "live" or _cassette_key in node.stash:
        return
    stack = contextlib.ExitStack()
    stack.enter_context(cassette_for(request, settings, mode))
    node.stash[_cassette_key] = stack

    def close() -> None:
        del node.stash[_cassette_key]
        stack.close()

    request.addfinalizer(close)


def _close_async_after_each_call(runtime: Any) -> None:
    """Make the runtime close its async connections whenever no async call is in flight.

    An async test's event loop (pytest-asyncio's) is closed before the test's fixtures are torn
    down, so the fixture cannot close them on it any more; left open, their sockets warn when
    collected (an error in a strict suite). A new connection per call costs little in a test.
    """
    aclose = getattr(runtime, "aclose", None)
    if not callable(aclose) or getattr(runtime, "_opdecide_closes_async", False):
        return
    runtime._opdecide_closes_async = True
    original = runtime.call_model_async
    in_flight = 0

    async def call_model_async(request: Any) -> Any:
        nonlocal in_flight
        in_flight += 1
        try:
            return await original(request)
        finally:
            in_flight -= 1
            if not in_flight:
                await aclose()

    runtime.call_model_async = call_model_async


def _close(runtime: Any) -> None:
    close = getattr(runtime, "close", None)
    if callable(close):
        close()


@contextlib.contextmanager
def real_runtime(
    request: pytest.FixtureRequest, settings: Settings, mode: str
) -> Iterator[Runtime]:
    """The real runtime of a cassette test, wired to its cassette unless live."""
    runtime = _runtime_from_hook(request, settings)
    closable = _closable(runtime)
    if closable:
        _close_async_after_each_call(runtime)
    _use_cassette(request, settings, mode)
    try:
        yield runtime
    finally:
        if closable:
            _close(runtime)


def real_decision_provider(request: pytest.FixtureRequest, settings: Settings, mode: str) -> Any:
    """The real question-decision provider of a cassette test."""
    supplied = request.config.hook.pytest_opdecide_decision_provider(
        request=request, settings=settings
    )
    if supplied is None:
        supplied = OpenAICompatibleDecisionProvider(
            base_url=settings.base_url or "", model=settings.model
        )
    _use_cassette(request, settings, mode)
    return supplied
