"""Hook specifications: registered, documented, and used by the fixtures in live mode.

``pytest_opdecide_scrub_interaction`` is exercised by the cassette tests; here it is only
checked to be registered and documented.
"""

from __future__ import annotations

import inspect

import pytest

from pytest_opdecide import hookspecs

HOOKS = ["pytest_opdecide_decision_provider", "pytest_opdecide_runtime"]
ALL_HOOKS = sorted([*HOOKS, "pytest_opdecide_scrub_interaction"])


def test_every_hookspec_is_named_in_the_namespace() -> None:
    names = sorted(name for name in vars(hookspecs) if name.startswith("pytest_"))
    assert names == ALL_HOOKS


@pytest.mark.parametrize("name", ALL_HOOKS)
def test_every_hookspec_is_registered(project: pytest.Pytester, name: str) -> None:
    config = project.parseconfigure()
    caller = getattr(config.pluginmanager.hook, name)
    assert caller.spec is not None
    assert caller.spec.opts["firstresult"] is (name in HOOKS)


@pytest.mark.parametrize("name", ALL_HOOKS)
def test_every_hookspec_documents_args_returns_and_an_example(name: str) -> None:
    function = getattr(hookspecs, name)
    doc = inspect.getdoc(function)
    assert doc is not None
    for section in ("Args:", "Returns:", "Example:", "    .. code-block:: python"):
        assert f"\n{section}\n" in f"\n{doc}\n" or f"\n{section}" in doc, (name, section)
    for parameter in inspect.signature(function).parameters:
        assert f"    {parameter}: " in doc, (name, parameter)
    assert f"def {name}(" in doc


def test_a_misspelled_hook_is_reported(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        def pytest_opdecide_runtim(request, settings):
            return None
        """
    )
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest()
    assert result.ret != 0
    assert "unknown hook 'pytest_opdecide_runtim'" in "\n".join(result.outlines + result.errlines)


def test_a_hook_with_a_wrong_argument_is_reported(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        def pytest_opdecide_runtime(request, setings):
            return None
        """
    )
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest()
    assert result.ret != 0
    assert "setings" in "\n".join(result.outlines + result.errlines)


LIVE_CONFTEST = """
import pytest
from fake_runtimes import FakeDecisionProvider, ScriptedRuntime

CALLS = []


def pytest_opdecide_runtime(request, settings):
    CALLS.append(("runtime", request.node.name, settings.live, settings.model))
    return ScriptedRuntime("from the live model")


def pytest_opdecide_decision_provider(request, settings):
    CALLS.append(("provider", request.node.name, settings.live, settings.model))
    return FakeDecisionProvider(seed=99)
"""


def test_live_cassette_tests_get_the_runtime_and_provider_of_the_hooks(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(LIVE_CONFTEST)
    project.makepyfile(
        """
        import pytest
        from conftest import CALLS
        from pytest_opdecide import agent, current_runtime
        from pytest_opdecide.plugin._guard import guard


        @pytest.mark.opdecide(cassette=True, model="served-model")
        def test_live_runtime(runtime):
            assert current_runtime() is runtime
            assert agent("Hello?") == "from the live model"
            assert not guard.active  # live mode talks to the real model
            assert CALLS == [("runtime", "test_live_runtime", True, "served-model")]


        @pytest.mark.opdecide(cassette=True)
        def test_live_provider(decision_provider):
            assert decision_provider.seed == 99
            assert CALLS[-1] == ("provider", "test_live_provider", True, "smollm2-135m-instruct")


        @pytest.mark.opdecide(script=["scripted"])
        def test_scripted_tests_never_call_the_hooks(runtime, decision_provider):
            assert runtime.exec("Hi") == "scripted"
            assert [call[0] for call in CALLS] == ["runtime", "provider"]
        """
    )
    project.runpytest("--opdecide-live").assert_outcomes(passed=3)


def test_the_first_hook_result_that_is_not_none_wins(project: pytest.Pytester) -> None:
    project.makepyfile(
        second_opinion="""
        from fake_runtimes import ScriptedRuntime


        def pytest_opdecide_runtime(request, settings):
            return ScriptedRuntime("from the plugin")
        """
    )
    project.makeconftest(
        """
        def pytest_opdecide_runtime(request, settings):
            return None
        """
    )
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(cassette=True)
        def test_live(runtime):
            assert runtime.exec("Hi") == "from the plugin"
        """
    )
    project.syspathinsert()
    project.runpytest("-p", "second_opinion", "--opdecide-live").assert_outcomes(passed=1)


def test_a_hook_must_return_a_runtime(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        def pytest_opdecide_runtime(request, settings):
            return "http://127.0.0.1:8765/v1"
        """
    )
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(cassette=True)
        def test_live(runtime):
            pass
        """
    )
    result = project.runpytest("--opdecide-live")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*pytest_opdecide_runtime returned str *, which is not a runtime*"]
    )


def test_without_hooks_live_tests_get_openai_compatible_components(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        """
        import pytest
        from pytest_opdecide.questions import OpenAICompatibleDecisionProvider
        from pytest_opdecide.runtimes import OpenAICompatibleRuntime


        @pytest.mark.opdecide(cassette=True, base_url="http://127.0.0.1:9/v1", model="tiny")
        def test_live(runtime, decision_provider):
            assert isinstance(runtime, OpenAICompatibleRuntime)
            assert runtime.model == "tiny"
            assert isinstance(decision_provider, OpenAICompatibleDecisionProvider)
            assert decision_provider.base_url == "http://127.0.0.1:9/v1"
            assert decision_provider.model == "tiny"
        """
    )
    project.runpytest("--opdecide-live").assert_outcomes(passed=1)
