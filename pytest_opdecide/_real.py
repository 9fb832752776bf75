"""Real components for cassette and live tests: built from hooks or from the settings."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_opdecide._runtime import Runtime
from pytest_opdecide._settings import Settings

__all__ = ["real_decision_provider", "real_runtime"]


def _runtime_from_hook(request: pytest.FixtureRequest, settings: Settings) -> Runtime:
    supplied = request.config.hook.pytest_opdecide_runtime(request=request, settings=settings)
    if supplied is not None:
        if not isinstance(supplied, Runtime):
            pytest.fail(
                f"pytest_opdecide_runtime returned {type(supplied).__name__}, not a Runtime",
                pytrace=False,
            )
        return supplied
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    return OpenAICompatibleRuntime(settings.base_url or "", model=settings.model)


@contextlib.contextmanager
def real_runtime(
    request: pytest.FixtureRequest, settings: Settings, mode: str
) -> Iterator[Runtime]:
    """The real runtime of a cassette test, wired to its cassette unless live."""
    runtime = _runtime_from_hook(request, settings)
    if mode == "live":
        yield runtime
        return
    from pytest_opdecide._cassettes import cassette_for

    with cassette_for(request, settings, mode):
        yield runtime


def real_decision_provider(request: pytest.FixtureRequest, settings: Settings, mode: str) -> Any:
    """The real question-decision provider of a cassette test."""
    supplied = request.config.hook.pytest_opdecide_decision_provider(
        request=request, settings=settings
    )
    if supplied is None:
        from pytest_opdecide.questions import OpenAICompatibleDecisionProvider

        supplied = OpenAICompatibleDecisionProvider(
            base_url=settings.base_url or "", model=settings.model
        )
    if mode != "live":
        from pytest_opdecide._cassettes import cassette_for

        stack = contextlib.ExitStack()
        stack.enter_context(cassette_for(request, settings, mode))
        request.addfinalizer(stack.close)
    return supplied
