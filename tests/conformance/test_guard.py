"""The guard test: a standard check cannot be deleted, or overridden without an xfail reason."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
from hypothesis import strategies as st

from pytest_opdecide import conformance
from pytest_opdecide.conformance import ConformanceError, DecisionProviderTests, RuntimeTests
from pytest_opdecide.conformance._standard import check_standard_checks, standard_checks

PRELOADED = (conformance.DecisionProviderTests, st.SearchStrategy)  # see test_gallery.py

PYTEST_ARGS = ["-p", "no:cacheprovider"]
if importlib.util.find_spec("pytest_asyncio") is not None:
    PYTEST_ARGS += ["-o", "asyncio_default_fixture_loop_scope=function"]

HEADER = """
import pytest
from fake_runtimes import FakeDecisionProvider
from pytest_opdecide.conformance import DecisionProviderTests


def factory(config):
    return FakeDecisionProvider()


class TestProvider(DecisionProviderTests):
    provider_factory = factory
    needs_backend = False
"""


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_provider=HEADER + textwrap.indent(textwrap.dedent(body), "    "))
    return pytester.runpytest(
        *PYTEST_ARGS, "-k", "no_standard_check_removed or choice_answers or identity", "-rxX"
    )


def test_every_standard_check_is_guarded() -> None:
    provider_checks = standard_checks(DecisionProviderTests)
    runtime_checks = standard_checks(RuntimeTests)
    assert "test_identity" in provider_checks
    assert "test_property_based_requests" in provider_checks
    assert "test_no_standard_check_removed" not in provider_checks
    assert "test_async_twin_matches_sync" in runtime_checks
    for checks in (provider_checks, runtime_checks):
        for name, check in checks.items():
            assert check.__doc__, f"{name} has a docstring"
            assert "Fix" in check.__doc__, f"{name} says how to fix a failure"


def test_an_untouched_subclass_passes_the_guard(pytester: pytest.Pytester) -> None:
    result = run(pytester, "")
    result.assert_outcomes(passed=3)


def test_deleting_a_check_fails_the_guard(pytester: pytest.Pytester) -> None:
    result = run(pytester, "test_choice_answers = None\n")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*standard_check: TestProvider drops standard checks of DecisionProviderTests: "
            "test_choice_answers is deleted (set to None in TestProvider)*",
            "*How to fix:*xfail*",
        ]
    )


def test_overriding_a_check_without_xfail_fails_the_guard(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        def test_choice_answers(self, provider, recording_transport):
            pass
        """,
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_choice_answers is overridden in TestProvider without @pytest.mark.xfail*"]
    )


def test_an_xfail_without_a_reason_does_not_count(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.xfail
        def test_identity(self, provider):
            raise AssertionError("not today")
        """,
    )
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*test_identity is overridden in TestProvider without*"])


def test_an_override_marked_xfail_with_a_reason_is_accepted(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.xfail(reason="our labels are words, not letters", strict=True)
        def test_choice_answers(self, provider, recording_transport):
            super().test_choice_answers(provider, recording_transport)
            raise AssertionError("known gap")
        """,
    )
    result.assert_outcomes(passed=2, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*test_choice_answers*our labels are words*"])


def test_the_runtime_suite_is_guarded_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_runtime="""
        from fake_runtimes import ScriptedRuntime
        from pytest_opdecide.conformance import RuntimeTests, RuntimeUnderTest


        class TestRuntime(RuntimeTests):
            def scripted_runtime(self, replies):
                return RuntimeUnderTest.from_trace(ScriptedRuntime(*replies))

            test_async_twin_matches_sync = None
        """
    )
    result = pytester.runpytest(*PYTEST_ARGS)
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(
        ["*runtime: standard_check: *test_async_twin_matches_sync is deleted (set to None in*"]
    )


def test_check_standard_checks_names_every_dropped_check() -> None:
    class Dropped(DecisionProviderTests):
        test_identity = None  # type: ignore[assignment]

        def test_usage_and_model(self) -> None:  # type: ignore[override]
            pass

    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(Dropped, DecisionProviderTests)
    assert caught.value.value == ["test_identity", "test_usage_and_model"]


# --- the guard follows inheritance ------------------------------------------------------------


class FirstSection:
    def test_first(self) -> None:
        """A check of the first section."""


class SecondSection:
    def test_second(self) -> None:
        """A check of the second section."""

    def test_third(self) -> None:
        """Another check of the second section."""


class Suite(SecondSection, FirstSection):
    """A suite put together from mixins, as ``DecisionProviderTests`` is (bases listed last
    section first, so that pytest runs the first section's checks first)."""

    def test_no_standard_check_removed(self) -> None:
        check_standard_checks(type(self), Suite)


def test_the_standard_checks_of_a_suite_include_those_of_its_mixins() -> None:
    assert standard_checks(Suite) == {
        "test_first": FirstSection.test_first,
        "test_second": SecondSection.test_second,
        "test_third": SecondSection.test_third,
    }
    assert list(standard_checks(Suite)) == ["test_first", "test_second", "test_third"]


def test_deleting_a_check_of_a_mixin_fails_the_guard() -> None:
    class Dropped(Suite):
        test_second = None  # type: ignore[assignment]

    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(Dropped, Suite)
    assert caught.value.value == ["test_second"]
    assert (
        "Dropped drops standard checks of Suite: test_second is deleted (set to None in "
        "Dropped)" in str(caught.value)
    )


def test_overriding_a_check_of_a_mixin_without_xfail_fails_the_guard() -> None:
    class Overridden(Suite):
        def test_first(self) -> None:
            pass

    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(Overridden, Suite)
    assert caught.value.value == ["test_first"]
    assert "test_first is overridden in Overridden without @pytest.mark.xfail(reason=...)" in str(
        caught.value
    )


def test_a_check_of_a_mixin_dropped_by_a_mixin_of_the_user_fails_the_guard() -> None:
    class Quieter:
        test_third = None

    class Dropped(Quieter, Suite):
        pass

    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(Dropped, Suite)
    assert "test_third is deleted (set to None in Quieter)" in str(caught.value)


def test_a_check_of_a_mixin_overridden_with_an_xfail_reason_passes_the_guard() -> None:
    class Declared(Suite):
        @pytest.mark.xfail(reason="our second section is not there yet")
        def test_second(self) -> None:
            pass

    check_standard_checks(Declared, Suite)
    check_standard_checks(Suite, Suite)


# The checks of DecisionProviderTests live in one mixin per section.
MIXINS = [
    klass
    for klass in DecisionProviderTests.__mro__[1:]
    if any(name.startswith("test_") for name in vars(klass))
]


def home(name: str) -> type:
    """The class of DecisionProviderTests that defines the check ``name``."""
    return next(klass for klass in DecisionProviderTests.__mro__ if name in vars(klass))


def test_the_checks_of_every_mixin_of_the_provider_suite_are_guarded() -> None:
    checks = standard_checks(DecisionProviderTests)
    assert MIXINS, "the checks live in mixins"
    for mixin in MIXINS:
        own = [name for name in vars(mixin) if name.startswith("test_")]
        assert own, mixin
        for name in own:
            assert checks[name] is vars(mixin)[name], name
    # In the order they run: section by section, identity first.
    names = list(checks)
    assert names == [
        name
        for klass in reversed(DecisionProviderTests.__mro__)
        for name in vars(klass)
        if name.startswith("test_") and name != "test_no_standard_check_removed"
    ]
    assert names[0] == "test_identity"
    assert names[-1] == "test_property_based_requests"


@pytest.mark.parametrize("mixin", MIXINS, ids=lambda mixin: mixin.__name__)
def test_dropping_a_check_of_a_mixin_of_the_provider_suite_fails_the_guard(mixin: type) -> None:
    name = next(name for name in vars(mixin) if name.startswith("test_"))
    assert name not in vars(DecisionProviderTests)

    deleted = type("Deleted", (DecisionProviderTests,), {name: None})
    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(deleted, DecisionProviderTests)
    assert caught.value.value == [name]
    assert f"{name} is deleted (set to None in Deleted)" in str(caught.value)

    def override(self: object, *args: object, **kwargs: object) -> None:
        pass

    overridden = type("Overridden", (DecisionProviderTests,), {name: override})
    with pytest.raises(ConformanceError) as caught:
        check_standard_checks(overridden, DecisionProviderTests)
    assert f"{name} is overridden in Overridden without @pytest.mark.xfail" in str(caught.value)

    marked = pytest.mark.xfail(reason="known gap")(override)
    check_standard_checks(
        type("Declared", (DecisionProviderTests,), {name: marked}), DecisionProviderTests
    )


def test_a_subclass_dropping_checks_of_mixins_fails_the_guard(pytester: pytest.Pytester) -> None:
    assert home("test_abort_during_the_call_is_honoured") is not DecisionProviderTests
    assert home("test_property_based_requests") is not DecisionProviderTests
    pytester.makepyfile(
        test_provider=HEADER
        + textwrap.indent(
            textwrap.dedent(
                """
                test_abort_during_the_call_is_honoured = None

                def test_property_based_requests(self, provider, recording_transport):
                    pass
                """
            ),
            "    ",
        )
    )
    result = pytester.runpytest(*PYTEST_ARGS, "-k", "no_standard_check_removed")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*standard_check: TestProvider drops standard checks of DecisionProviderTests: "
            "test_abort_during_the_call_is_honoured is deleted (set to None in TestProvider); "
            "test_property_based_requests is overridden in TestProvider without "
            "@pytest.mark.xfail(reason=...)*",
        ]
    )


def test_a_subclass_marking_a_check_of_a_mixin_xfail_passes_the_guard(
    pytester: pytest.Pytester,
) -> None:
    name = "test_decide_leaves_the_request_and_the_thread_as_it_found_them"
    assert home(name) is not DecisionProviderTests
    pytester.makepyfile(
        test_provider=HEADER
        + textwrap.indent(
            textwrap.dedent(
                f"""
                @pytest.mark.xfail(reason="our provider keeps a note on the thread")
                def {name}(self, provider, recording_transport):
                    super().{name}(provider, recording_transport)
                """
            ),
            "    ",
        )
    )
    result = pytester.runpytest(*PYTEST_ARGS, "-k", "no_standard_check_removed")
    result.assert_outcomes(passed=1)
