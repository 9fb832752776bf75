"""Fixtures of the cassette tests: a fake OpenAI-compatible server and a project using it."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from _openai_server import OpenAIServer

from ._support import write_ini


@pytest.fixture(scope="session", autouse=True)
def _import_session_end_modules() -> None:
    """Import once what plugins import at the end of every session, and what httpx imports
    late.

    An in-process pytester run drops every module it imported; hypothesis's plugin imports
    hypothesis in its terminal summary, which would then cost seconds per run.
    """
    with contextlib.suppress(ImportError):
        importlib.import_module("hypothesis.internal.observability")
    # httpx imports httpcore at its first request and keeps the map of httpcore's errors: first
    # imported inside a run (and dropped after it), the next run's httpcore errors would not
    # map to httpx's, and a broken connection would escape as httpcore.RemoteProtocolError.
    importlib.import_module("httpcore")


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A fake OpenAI-compatible server on 127.0.0.1, started for the test."""
    with OpenAIServer() as started:
        yield started


@pytest.fixture
def project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: OpenAIServer
) -> pytest.Pytester:
    """``pytester`` as a strict project whose real components talk to ``server``."""
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    write_ini(pytester, opdecide_base_url=server.url)
    return pytester


REAL_MODEL_MODULE = "test_real_model.py"


@pytest.hookimpl
def pytest_opdecide_runtime(request: pytest.FixtureRequest, settings: Any) -> Any:
    """The real runtime of ``test_real_model.py``: short replies, a patient time limit.

    The local model answers in seconds on a loaded machine; ``max_tokens`` keeps its replies
    (and so the cassettes) short. Other tests get the plugin's default runtime.
    """
    if request.node.path.name != REAL_MODEL_MODULE:
        return None
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    return OpenAICompatibleRuntime(
        settings.base_url,
        model=settings.model,
        timeout_s=300,
        extra_body={"max_tokens": 64},
        structured_decisions=settings.structured_decisions,
    )
