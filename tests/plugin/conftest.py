"""Fixtures of the plugin tests: a ``pytester`` set up as a project that uses the plugin."""

from __future__ import annotations

import contextlib
import importlib

import pytest

from .support import write_ini


@pytest.fixture(scope="session", autouse=True)
def _import_session_end_modules() -> None:
    """Import once what in-process runs would otherwise import again and again.

    An in-process pytester run drops every module it imported: hypothesis's plugin imports
    hypothesis in its terminal summary, the ``runtime`` fixture imports the fakes.
    """
    for name in (
        "hypothesis.internal.observability",
        # What the plugin's fixtures import on first use: imported once here, not per run.
        "fake_runtimes",
        # Imported lazily by the package (question decisions are optional): a run that drops
        # them leaves the plugin holding classes a later run's ``choose(...)`` is not.
        "fake_runtimes._answers",
        "fake_runtimes._providers",
        "httpx",
        "pytest_opdecide.decision",
        "pytest_opdecide.plugin._snapshots",
        # The live-run report's charts: numpy cannot be imported twice in one process.
        "pytest_opdecide.plugin._pass_rates",
        "matplotlib.figure",
        "matplotlib.backends.backend_svg",
    ):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """``pytester`` with the strict ini of a well-configured project (see ``write_ini``)."""
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    write_ini(pytester)
    return pytester
