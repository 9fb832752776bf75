"""The test's model wins: Agents built with a runtime of their own use the test's runtime; the
opt-out, what the guard says when a configured runtime is reached, and what a test that forgot
its runtime is told."""

from __future__ import annotations

import pytest

from .support import error_text

PRODUCTION = """
import pytest
from fake_runtimes import pick
from pytest_opdecide import Agent, decision
from pytest_opdecide.runtimes import OpenAICompatibleRuntime


class Router(Agent):
    def route(self, ticket):
        return decision.make(f"Route: {ticket}", {"refund": "REFUND", "close": "CLOSED"})


ROUTER = Router(runtime=OpenAICompatibleRuntime(base_url="https://llm.example.com/v1", model="m"))
"""


def test_the_tests_runtime_replaces_the_agents_own(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_router=PRODUCTION
        + """

@pytest.mark.opdecide(script=[pick("close")])
def test_with_the_marker_only():
    assert ROUTER.route("Thanks!") == "CLOSED"


@pytest.mark.opdecide(script=[pick("refund")])
def test_with_the_fixture(runtime):
    assert ROUTER.route("Broken.") == "REFUND"
    assert runtime.last_call.options == ["refund", "close"]


def test_the_agent_keeps_its_own_runtime_outside():
    assert ROUTER.runtime.model == "m"
"""
    )
    project.runpytest().assert_outcomes(passed=3)


def test_opting_out_keeps_the_configured_runtime_and_the_guard_says_why(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_router=PRODUCTION
        + """

@pytest.mark.opdecide(override_runtimes=False)
def test_means_the_configured_one(runtime):
    ROUTER.route("Thanks!")
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    text = error_text(result)
    assert "RealCallBlocked: pytest-opdecide blocked a real call to https://llm.example.com" in text
    assert "Router was built with a runtime of its own (Agent(runtime=...))" in text
    assert "override_runtimes setting on" in text
    assert "with use_runtime(fake, override=True):" in text


def test_without_the_plugin_the_guard_names_the_override(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_router=PRODUCTION
        + """

def test_forgot_the_fixture():
    ROUTER.route("Thanks!")
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    text = error_text(result)
    assert "Router was built with a runtime of its own" in text
    assert "the `runtime` fixture or @pytest.mark.opdecide(script=[...])" in text


def test_the_opt_out_is_a_setting_of_the_one_precedence(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def opdecide_config():
            return {"override_runtimes": False}
        """
    )
    project.makepyfile(
        test_router=PRODUCTION
        + """

def test_configured_one_is_kept(runtime):
    with pytest.raises(Exception, match="Router was built with a runtime of its own"):
        ROUTER.route("Thanks!")
    assert runtime.calls == []


@pytest.mark.opdecide(script=[pick("close")], override_runtimes=True)
def test_marker_beats_the_fixture():
    assert ROUTER.route("Thanks!") == "CLOSED"
"""
    )
    project.runpytest().assert_outcomes(passed=2)


def test_a_test_that_forgot_its_runtime_is_told_the_fixture_and_the_marker(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_desk="""
        from pytest_opdecide import Agent, decision

        class Desk(Agent):
            def route(self, ticket):
                return decision.make(f"Route: {ticket}", {"close": "CLOSED"})

        def test_routes():
            assert Desk().route("Thanks!") == "CLOSED"
        """
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    assert error_text(result).splitlines()[:5] == [
        "RuntimeError: no runtime available in test_desk.py::test_routes: the code under test "
        "made a model call, and the test gives it no runtime.",
        "  - ask for the `runtime` fixture: def test_routes(runtime): ...",
        '  - or script the model: @pytest.mark.opdecide(script=[pick("...")]) (it brings the '
        "`runtime` fixture along)",
        "  - or pass runtime= explicitly.",
    ]
