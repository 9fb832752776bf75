"""The marker's data is never ignored: ``script=``, ``answers=`` and ``cassette=True`` bring in
the fixture they need when the test does not request it (as pytest-recording's ``vcr`` marker
brings in its cassette)."""

from __future__ import annotations

import pytest

from .support import error_text

AGENT = """
import pytest
from fake_runtimes import choose, pick
from pytest_opdecide import Agent, decision

OPTIONS = {"refund": "REFUND", "close": "CLOSED"}


class Router(Agent):
    def route(self, ticket):
        return decision.make(f"Route: {ticket}", OPTIONS)
"""


def test_a_script_reaches_an_agent_method_without_the_runtime_fixture(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_router=AGENT
        + """

@pytest.mark.opdecide(script=[pick("close")])
def test_routes():
    assert Router().route("Thanks!") == "CLOSED"


@pytest.mark.opdecide(script=[pick("close")])
class TestRouting:
    def test_in_a_class(self):
        assert Router().route("Thanks!") == "CLOSED"


@pytest.fixture
def routed():
    return Router().route("Thanks!")


@pytest.mark.opdecide(script=[pick("refund")])
def test_bound_before_other_fixtures(routed):
    assert routed == "REFUND"
"""
    )
    project.runpytest().assert_outcomes(passed=3)


def test_an_unused_script_fails_even_without_the_runtime_fixture(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_router=AGENT
        + """

@pytest.mark.opdecide(script=[pick("close"), pick("refund")])
def test_routes_once():
    assert Router().route("Thanks!") == "CLOSED"
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(passed=1, errors=1)
    assert "UnusedSteps" in result.stdout.str()


def test_unused_answers_fail_even_without_the_decision_provider_fixture(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_answers=AGENT
        + """

@pytest.mark.opdecide(answers={"intent": choose("billing")})
def test_never_asks():
    pass
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(passed=1, errors=1)
    assert "intent" in error_text(result)


def test_a_marker_without_data_brings_in_nothing(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain=AGENT
        + """

@pytest.mark.opdecide(seed=3)
def test_no_runtime():
    with pytest.raises(RuntimeError, match="no runtime available"):
        Router().route("Thanks!")
"""
    )
    project.runpytest().assert_outcomes(passed=1)


def test_only_the_marked_cases_of_a_parametrized_test_get_the_markers_fixture(
    project: pytest.Pytester,
) -> None:
    """Only a marked test gets the fixture its marker needs (the others carry no fixture of
    the plugin's); the cases of one function share their list of fixtures, so the case with
    the marker must not give it to the others."""
    project.makepyfile(
        test_router=AGENT
        + """

@pytest.mark.parametrize(
    "ticket",
    ["plain", pytest.param("scripted", marks=pytest.mark.opdecide(script=[pick("close")])), "last"],
)
def test_cases(ticket, request):
    if ticket == "scripted":
        assert Router().route(ticket) == "CLOSED"
        assert "runtime" in request.fixturenames
    else:
        assert "runtime" not in request.fixturenames
    assert not [name for name in request.fixturenames if name.startswith("_opdecide")]
"""
    )
    project.runpytest().assert_outcomes(passed=3)


def test_the_fixture_a_marker_brings_in_comes_after_wider_scopes_and_before_the_tests_own(
    project: pytest.Pytester,
) -> None:
    """Where an autouse fixture of the plugin would be set up: after the test's session and
    module fixtures (a session fixture that starts a server or sets the environment runs
    first), before its function fixtures (which may call an Agent method)."""
    project.makeconftest(
        """
import pytest

@pytest.fixture(scope="session", autouse=True)
def server():
    return "up"

@pytest.fixture(scope="module")
def catalogue():
    return ["refund", "close"]
"""
    )
    project.makepyfile(
        test_router=AGENT
        + """

@pytest.fixture
def routed():
    return Router().route("Thanks!")


@pytest.mark.opdecide(script=[pick("close")])
def test_routes(catalogue, routed):
    assert routed == "CLOSED"
"""
    )
    result = project.runpytest("--setup-show")
    result.assert_outcomes(passed=1)
    # "SETUP    F runtime (fixtures used: opdecide_settings)": the name follows the scope.
    setups = [line.split()[2] for line in result.stdout.lines if line.split()[:1] == ["SETUP"]]
    wanted = {"server", "catalogue", "runtime", "routed"}
    assert [name for name in setups if name in wanted] == [
        "server",
        "catalogue",
        "runtime",
        "routed",
    ]


def test_a_marker_added_while_the_test_is_set_up_is_refused_not_ignored(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(
        """
import pytest
from fake_runtimes import pick


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.add_marker(pytest.mark.opdecide(script=[pick("close")]))
"""
    )
    project.makepyfile(
        test_router=AGENT
        + """

def test_routes():
    assert Router().route("Thanks!") == "CLOSED"
"""
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert "got its @pytest.mark.opdecide marker while it was being set up" in text
    assert "pytest_collection_modifyitems" in text
