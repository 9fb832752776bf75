"""Hook specifications of the opdecide plugin (implement them in ``conftest.py`` or a plugin).

Every hook is named ``pytest_opdecide_...``. pytest registers these through
``pytest_addhooks``; pluggy checks implementations against them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_opdecide._nextstep._runtime import Runtime
    from pytest_opdecide.plugin._settings import Settings


@pytest.hookspec(firstresult=True)
def pytest_opdecide_runtime(request: pytest.FixtureRequest, settings: Settings) -> Runtime | None:
    """Supply the real runtime for recorded and live tests.

    Called by the ``runtime`` fixture when a test runs against a cassette or the live model
    (never for scripted tests). The first non-``None`` result wins; without any, the plugin
    builds an ``OpenAICompatibleRuntime`` from the ``base_url``, ``model`` and
    ``structured_decisions`` settings (and closes its connections after the test).

    Args:
        request: The requesting test's fixture request.
        settings: The resolved settings of that test.

    Returns:
        A :class:`~pytest_opdecide.Runtime`, or ``None`` to let the next implementation decide.

    Example:
        .. code-block:: python

            def pytest_opdecide_runtime(request, settings):
                return MyRuntime(base_url=settings.base_url, model="my-model")
    """


@pytest.hookspec(firstresult=True)
def pytest_opdecide_decision_provider(request: pytest.FixtureRequest, settings: Settings) -> Any:
    """Supply the real question-decision provider for recorded and live tests.

    Called by the ``decision_provider`` fixture in cassette and live mode. The first
    non-``None`` result wins; without any, the plugin builds an
    ``OpenAICompatibleDecisionProvider`` from the ``base_url`` and ``model`` settings.

    Args:
        request: The requesting test's fixture request.
        settings: The resolved settings of that test.

    Returns:
        A ``DecisionProvider``, or ``None``.

    Example:
        .. code-block:: python

            def pytest_opdecide_decision_provider(request, settings):
                return MyProvider(api_key="", model=settings.model)
    """


@pytest.hookspec
def pytest_opdecide_scrub_interaction(
    interaction: dict[str, Any], settings: Settings
) -> dict[str, Any] | None:
    """Scrub one recorded HTTP interaction before it is written to a cassette.

    Called for every interaction in record mode, after the built-in scrubbing of keys,
    tokens and cookies. Modify ``interaction`` in place, or return a replacement; return
    ``None`` to keep it as it is. Every implementation runs, in plugin order.

    Args:
        interaction: ``{"request": {...}, "response": {...}}`` as it will be stored in the
            cassette (method, uri, headers, body; status, headers, body). Bodies come in their
            stored form: JSON under ``body["json"]``, event streams under ``body["events"]``
            (also a long one that the file stores as one ``event_stream`` block),
            other text as a string. A changed request body must still match what the code
            sends on replay (or name the changed paths in the ``volatile`` setting).
        settings: The resolved settings of the recording test.

    Returns:
        A replacement interaction, or ``None``.

    Example:
        .. code-block:: python

            def pytest_opdecide_scrub_interaction(interaction, settings):
                interaction["request"]["headers"].pop("x-customer-id", None)
    """
